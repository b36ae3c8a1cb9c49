import torch
import torch.distributed as dist


class TrainState:
    def __init__(self, device):
        self.step = 0
        self.local_tokens = torch.zeros((), dtype=torch.int32, device=device)

    def advance(self, attention_mask):
        self.local_tokens += torch.count_nonzero(attention_mask)
        self.step += 1

    def global_consumed_tokens(self, group=None):
        total = self.local_tokens.clone()
        dist.all_reduce(total, group=group)
        return total.item()

    def state_dict(self):
        return {"step": self.step, "consumed_tokens": self.global_consumed_tokens()}
