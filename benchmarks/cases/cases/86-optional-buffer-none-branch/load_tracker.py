import torch


class ExpertLoadTracker:
    def __init__(self, num_experts, track=True, device="cuda"):
        if track:
            self.load = torch.zeros(num_experts, device=device)
        else:
            self.load = None

    def update(self, topk_idx):
        if self.load is not None:
            self.load += torch.bincount(topk_idx.flatten(), minlength=self.load.numel())

    def snapshot(self):
        return None if self.load is None else self.load.clone()
