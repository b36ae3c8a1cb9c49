import torch
import torch.nn as nn


class ConsistencyTeacher(nn.Module):
    """Teacher whose target-noise schedule advances once per training call."""

    def __init__(self, net, ramp_steps=10000):
        super().__init__()
        self.net = net
        self.ramp_steps = ramp_steps
        self.register_buffer("calls", torch.zeros(()))

    def discretisation(self, s0=2, s1=150):
        k = torch.clamp(self.calls.float() / self.ramp_steps, max=1.0)
        return int(s0 + (s1 - s0) * k.item())

    def forward(self, x, sigma):
        if self.training:
            self.calls += 1
        return self.net(x, sigma)
