import torch
import torch.nn.functional as F


def top1_dispatch(gates, capacity):
    """gates: [tokens, experts] in the model's dtype. Returns the slot of each kept token."""
    expert_idx = gates.argmax(dim=-1)
    mask = F.one_hot(expert_idx, num_classes=gates.shape[-1]).type_as(gates)
    locations = torch.cumsum(mask, dim=0) - 1
    keep = (locations < capacity) & mask.bool()
    slot = (locations * mask).sum(dim=-1).long()
    return expert_idx, slot, keep.any(dim=-1)
