import torch


def valid_per_class(labels, valid):
    return torch.bincount(labels, weights=(valid > 0).float(), minlength=3)
