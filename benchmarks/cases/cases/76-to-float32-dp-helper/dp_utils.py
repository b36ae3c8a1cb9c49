import torch
import torch.distributed as dist


class DataParallelHelper:
    def __init__(self, group=None):
        self.group = group
        self.world = dist.get_world_size(group)

    def sum_across(self, t):
        dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)
        return t

    def tokens_in_global_batch(self, attention_mask):
        local = torch.count_nonzero(attention_mask).to(torch.float32)
        return self.sum_across(local)
