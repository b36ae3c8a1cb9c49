import torch

from . import binning


class TokenCalibrationError:
    """Expected calibration error over every predicted token of an eval set."""

    def __init__(self, n_bins=15, device="cuda"):
        self.n_bins = n_bins
        self.conf_sum = torch.zeros(n_bins, device=device)
        self.hits = torch.zeros(n_bins, device=device)
        self.counts = torch.zeros(n_bins, device=device)

    def update(self, logits, labels):
        keep = labels != -100
        probs = logits[keep].float().softmax(-1)
        confidence, pred = probs.max(-1)
        conf_sum, hits, counts = binning.bin_statistics(confidence, pred == labels[keep], self.n_bins)
        self.conf_sum += conf_sum
        self.hits += hits
        self.counts += counts

    def compute(self):
        total = self.counts.sum()
        gap = (self.conf_sum - self.hits).abs()
        return (gap / total).sum().item()
