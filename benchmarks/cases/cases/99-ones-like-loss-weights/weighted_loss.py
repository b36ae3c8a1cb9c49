import torch
import torch.nn.functional as F


def weighted_token_loss(logits, labels, prompt_mask, prompt_weight=0.1):
    loss = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
    weights = torch.ones_like(loss)
    weights = weights.masked_fill(prompt_mask, prompt_weight)
    return (loss * weights).sum() / weights.sum()
