import torch
import torch.nn as nn


class RunningAccuracy(nn.Module):
    """Training accuracy since the last log, kept on the device."""

    def __init__(self):
        super().__init__()
        self.register_buffer("n_correct", torch.tensor(0.0))
        self.register_buffer("n_total", torch.tensor(0.0))

    @torch.no_grad()
    def update(self, logits, target):
        self.n_correct += (logits.argmax(dim=-1) == target).sum()
        self.n_total += target.shape[0]

    def compute(self):
        value = self.n_correct / self.n_total.clamp(min=1)
        self.n_correct.zero_()
        self.n_total.zero_()
        return value
