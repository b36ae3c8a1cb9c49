"""Reductions across data-parallel ranks."""
import torch.distributed as dist


def global_count(count):
    # `count` is a token count at every call site in the package
    as_float = count.float()
    dist.all_reduce(as_float)  # expect: PH003
    return as_float
