import torch
import torch.distributed as dist


def averaged_for_logging(loss):
    value = loss.detach().float().clone()
    dist.all_reduce(value, op=dist.ReduceOp.AVG)
    return value.item()
