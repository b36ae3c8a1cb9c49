import torch
import torch.nn as nn


def expert_counts(expert_idx, num_experts, dtype):
    return torch.bincount(expert_idx.flatten(), minlength=num_experts).to(dtype)


class SwitchBalanceLoss(nn.Module):
    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, router_logits, expert_idx):
        probs = router_logits.float().softmax(dim=-1)
        counts = expert_counts(expert_idx, self.num_experts, dtype=torch.float32)
        fraction = counts / expert_idx.numel()
        return self.num_experts * (fraction * probs.mean(dim=0)).sum()
