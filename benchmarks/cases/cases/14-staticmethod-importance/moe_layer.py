import torch
import torch.nn as nn
import torch.nn.functional as F


class Gate(nn.Module):
    def __init__(self, dim, num_experts):
        super().__init__()
        self.proj = nn.Linear(dim, num_experts)

    @staticmethod
    def importance(probs):
        return probs.float().sum(dim=0)

    def forward(self, x):
        return F.softmax(self.proj(x), dim=-1)


class ImportanceTracker(nn.Module):
    def __init__(self, num_experts):
        super().__init__()
        self.register_buffer("importance_sum", torch.zeros(num_experts), persistent=False)

    def observe(self, probs):
        self.importance_sum += Gate.importance(probs.detach())
