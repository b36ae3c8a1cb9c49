import torch
import torch.nn as nn


class UsageEMA(nn.Module):
    def __init__(self, codebook_size, decay=0.99):
        super().__init__()
        self.codebook_size = codebook_size
        self.decay = decay
        self.register_buffer("usage", torch.full((codebook_size,), 1.0 / codebook_size))

    @torch.no_grad()
    def forward(self, codes):
        probs = torch.bincount(codes.flatten(), minlength=self.codebook_size).float() / codes.numel()
        self.usage.mul_(self.decay).add_(probs, alpha=1 - self.decay)
        return self.usage
