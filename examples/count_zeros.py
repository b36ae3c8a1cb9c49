"""Gradient sparsity, counted the way Megatron-LM's count_zeros_fp32 did before it
switched to int64 (written for this repository, not copied).

`precision-lint check examples/` flags the float32 accumulator below; `--fix`
makes it int64. `precision-lint verify examples/` runs both versions.
"""
import torch
import torch.distributed as dist


def is_shared(param):
    return getattr(param, "shared", False)


def count_zero_gradients(parameters, group=None):
    """How many gradient entries are exactly zero, over all parameters and ranks."""
    zeros_seen = torch.zeros(1, dtype=torch.float, device="cuda")
    for param in parameters:
        if param.grad is None or is_shared(param):
            continue
        grad = param.grad.detach()
        zeros_here = grad.numel() - torch.count_nonzero(grad)
        zeros_seen = zeros_here + zeros_seen
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(zeros_seen, op=dist.ReduceOp.SUM, group=group)
    return zeros_seen.item()
