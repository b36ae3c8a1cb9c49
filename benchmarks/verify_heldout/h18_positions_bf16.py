import torch


def rope_positions(seq_len):
    return torch.arange(seq_len, dtype=torch.bfloat16)
