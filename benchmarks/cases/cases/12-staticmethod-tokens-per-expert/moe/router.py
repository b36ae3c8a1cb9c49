import torch
import torch.nn as nn
import torch.nn.functional as F


class TopKRouter(nn.Module):
    def __init__(self, hidden, num_experts, k=2):
        super().__init__()
        self.gate = nn.Linear(hidden, num_experts, bias=False)
        self.num_experts = num_experts
        self.k = k

    @staticmethod
    def tokens_per_expert(expert_idx, num_experts):
        return torch.bincount(expert_idx.flatten(), minlength=num_experts)

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        weights, expert_idx = probs.topk(self.k, dim=-1)
        return weights, expert_idx
