import torch
import torch.nn as nn


class RunningMeanStd(nn.Module):
    """Observation normaliser with a parallel (Chan et al.) variance update."""

    def __init__(self, shape, eps=1e-4):
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape))
        self.register_buffer("var", torch.ones(shape))
        self.register_buffer("count", torch.tensor(eps))

    @torch.no_grad()
    def update(self, x):
        batch_mean = x.mean(dim=0)
        batch_var = x.var(dim=0, unbiased=False)
        batch_count = x.shape[0]
        delta = batch_mean - self.mean
        total = self.count + batch_count
        self.mean += delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
        self.var.copy_(m2 / total)
        self.count += batch_count

    def forward(self, x):
        return (x - self.mean) / torch.sqrt(self.var + 1e-8)
