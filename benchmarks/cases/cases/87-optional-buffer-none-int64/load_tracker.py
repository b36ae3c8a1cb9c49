import torch


class ExpertLoadTracker:
    def __init__(self, num_experts, track=True, device="cuda"):
        if track:
            self.load = torch.zeros(num_experts, dtype=torch.int64, device=device)
        else:
            self.load = None

    def update(self, topk_idx):
        if self.load is not None:
            self.load += torch.bincount(topk_idx.flatten(), minlength=self.load.numel())
