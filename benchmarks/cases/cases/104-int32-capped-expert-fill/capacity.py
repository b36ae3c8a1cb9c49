import torch


def expert_fill(topk_idx, num_experts, capacity):
    """Slots used per expert in one batch; each of the k choices can fill at most `capacity`."""
    fill = torch.zeros(num_experts, dtype=torch.int32, device=topk_idx.device)
    for k in range(topk_idx.shape[1]):
        per_expert = torch.bincount(topk_idx[:, k], minlength=num_experts)
        fill += per_expert.clamp(max=capacity).to(torch.int32)
    return fill
