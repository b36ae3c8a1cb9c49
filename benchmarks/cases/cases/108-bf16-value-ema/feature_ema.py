import torch
import torch.nn as nn


class CenterEMA(nn.Module):
    """DINO-style centre of the teacher outputs, kept in bf16."""

    def __init__(self, dim, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("center", torch.zeros(1, dim, dtype=torch.bfloat16))

    @torch.no_grad()
    def update(self, teacher_out):
        batch_center = teacher_out.mean(dim=0, keepdim=True).to(self.center.dtype)
        self.center.mul_(self.momentum).add_(batch_center, alpha=1 - self.momentum)
