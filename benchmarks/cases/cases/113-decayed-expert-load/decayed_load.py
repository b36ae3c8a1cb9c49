import torch


class DecayedExpertLoad:
    def __init__(self, num_experts, decay=0.5, device="cuda"):
        self.decay = decay
        self.load = torch.zeros(num_experts, device=device)

    def observe(self, expert_idx):
        self.load += torch.bincount(expert_idx.flatten(), minlength=self.load.numel())

    def end_of_window(self):
        self.load = self.load * self.decay
        return self.load / self.load.sum().clamp(min=1)
