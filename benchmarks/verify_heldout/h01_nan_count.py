import torch


def count_bad_activations(activations):
    """How many activation entries went NaN over a run."""
    bad = torch.zeros(1)
    for act in activations:
        bad += torch.isnan(act).sum()
    return int(bad.item())
