import torch


def bin_statistics(confidence, correct, n_bins):
    """Per-bin confidence sums, correct counts and token counts for one batch."""
    idx = (confidence * n_bins).long().clamp(max=n_bins - 1)
    conf_sum = torch.zeros(n_bins, device=confidence.device).scatter_add_(0, idx, confidence)
    hits = torch.bincount(idx[correct], minlength=n_bins)
    counts = torch.bincount(idx, minlength=n_bins)
    return conf_sum, hits, counts
