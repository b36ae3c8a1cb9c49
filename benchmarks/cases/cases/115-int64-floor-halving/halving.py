import torch


class HalvingCounts:
    def __init__(self, num_bins, device="cuda"):
        self.counts = torch.zeros(num_bins, dtype=torch.int64, device=device)

    def observe(self, bins):
        self.counts += torch.bincount(bins, minlength=self.counts.numel())

    def age(self):
        self.counts = self.counts // 2
