import torch
import torch.distributed as dist


def global_token_count(loss_masks, group=None):
    n = sum((torch.count_nonzero(m) for m in loss_masks), 0.0)
    dist.all_reduce(n, group=group)
    return n
