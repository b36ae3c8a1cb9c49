import torch
import torch.nn as nn


class LearnedTemperature(nn.Module):
    """Contrastive temperature that is frozen for the first `warmup` steps."""

    def __init__(self, cfg, init=0.07, warmup=2000):
        super().__init__()
        dtype = torch.bfloat16 if cfg.bf16 else torch.float16
        self.log_t = nn.Parameter(torch.tensor(init).log().to(dtype))
        self.register_buffer("steps", torch.zeros((), dtype=dtype))
        self.warmup = warmup

    def forward(self, logits):
        if self.training:
            self.steps += 1
        t = self.log_t.exp()
        if self.steps.item() < self.warmup:
            t = t.detach()
        return logits / t
