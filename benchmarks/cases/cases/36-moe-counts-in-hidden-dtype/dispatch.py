import torch
import torch.nn as nn


class CapacityDispatcher(nn.Module):
    def __init__(self, num_experts, capacity_factor=1.25):
        super().__init__()
        self.num_experts = num_experts
        self.capacity_factor = capacity_factor

    def forward(self, hidden_states, expert_idx):
        # hidden_states: [tokens, hidden]; expert_idx: [tokens, k]
        flat_idx = expert_idx.flatten()
        tokens_per_expert = torch.zeros(self.num_experts, dtype=hidden_states.dtype, device=hidden_states.device)
        tokens_per_expert.scatter_add_(0, flat_idx, torch.ones_like(flat_idx, dtype=hidden_states.dtype))
        capacity = int(self.capacity_factor * flat_idx.numel() / self.num_experts)
        dropped = (tokens_per_expert - capacity).clamp(min=0).sum()
        return tokens_per_expert, dropped
