import torch


def count_loss_tokens(labels, ignore_index=-100):
    shifted = labels[..., 1:]
    return torch.count_nonzero(shifted != ignore_index)
