import torch
import torch.distributed as dist
from deepspeed.accelerator import get_accelerator


def global_batch_tokens(attention_mask, group=None):
    local = get_accelerator().FloatTensor([float(torch.count_nonzero(attention_mask).item())])
    dist.all_reduce(local, group=group)
    return local.item()
