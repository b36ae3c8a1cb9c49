import torch

from .binning import bin_statistics


class TokenCalibrationError:
    def __init__(self, n_bins=15, device="cuda"):
        self.n_bins = n_bins
        self.conf_sum = torch.zeros(n_bins, dtype=torch.float64, device=device)
        self.hits = torch.zeros(n_bins, dtype=torch.long, device=device)
        self.counts = torch.zeros(n_bins, dtype=torch.long, device=device)

    def update(self, confidence, correct):
        conf_sum, hits, counts = bin_statistics(confidence, correct, self.n_bins)
        self.conf_sum += conf_sum
        self.hits += hits
        self.counts += counts

    def compute(self):
        gap = (self.conf_sum - self.hits).abs()
        return (gap / self.counts.sum()).sum().item()
