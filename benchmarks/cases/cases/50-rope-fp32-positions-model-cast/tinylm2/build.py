import torch

from .rotary import Rotary


def build_rotary(head_dim):
    return Rotary(head_dim).to(torch.bfloat16)
