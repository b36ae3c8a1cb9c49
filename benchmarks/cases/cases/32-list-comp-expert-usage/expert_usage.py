import torch


class ExpertUsage:
    """Tokens routed to each expert of each MoE layer since the last reset."""

    def __init__(self, num_layers, num_experts, device="cuda"):
        self.num_experts = num_experts
        self.counts = [torch.zeros(num_experts, device=device) for _ in range(num_layers)]

    def record(self, layer, expert_idx):
        self.counts[layer] += torch.bincount(expert_idx.flatten(), minlength=self.num_experts)

    def imbalance(self):
        return [(c.max() / c.mean().clamp(min=1)).item() for c in self.counts]
