import torch
import torch.nn as nn

from .router import TopKRouter


class LoadMonitor(nn.Module):
    """Counts routed tokens per expert between two log intervals."""

    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts
        self.register_buffer("routed", torch.zeros(num_experts), persistent=False)

    def observe(self, expert_idx):
        self.routed += TopKRouter.tokens_per_expert(expert_idx, self.num_experts)

    def flush(self):
        share = self.routed / self.routed.sum().clamp(min=1)
        self.routed.zero_()
        return share
