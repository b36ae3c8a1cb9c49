import torch
import torch.nn as nn


class EpochTop1(nn.Module):
    """Top-1 accuracy over one pass of the 50,000-image validation set; reset every epoch."""

    def __init__(self):
        super().__init__()
        self.register_buffer("hits", torch.zeros(()))
        self.register_buffer("images", torch.zeros(()))

    def reset(self):
        self.hits.zero_()
        self.images.zero_()

    @torch.no_grad()
    def update(self, logits, target):
        self.hits += (logits.argmax(dim=1) == target).sum()
        self.images += target.shape[0]

    def compute(self):
        return (self.hits / self.images).item()
