import math

import torch


class CosineWithWarmup:
    def __init__(self, optimizer, warmup, total, device="cuda"):
        self.optimizer = optimizer
        self.warmup = warmup
        self.total = total
        self.base = [g["lr"] for g in optimizer.param_groups]
        self.step_t = torch.tensor(0.0, device=device)

    def step(self):
        self.step_t += 1
        s = self.step_t.item()
        if s < self.warmup:
            scale = s / self.warmup
        else:
            scale = 0.5 * (1 + math.cos(math.pi * (s - self.warmup) / (self.total - self.warmup)))
        for g, base in zip(self.optimizer.param_groups, self.base):
            g["lr"] = base * scale
