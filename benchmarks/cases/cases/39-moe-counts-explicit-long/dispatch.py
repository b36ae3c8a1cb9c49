import torch
import torch.nn as nn


class CapacityDispatcher(nn.Module):
    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, hidden_states, expert_idx):
        flat_idx = expert_idx.flatten()
        tokens_per_expert = hidden_states.new_zeros(self.num_experts, dtype=torch.long)
        tokens_per_expert.scatter_add_(0, flat_idx, torch.ones_like(flat_idx))
        return tokens_per_expert
