import torch


class RunningSums:
    def __init__(self, device="cuda"):
        self.float_total = torch.zeros((), device=device)
        self.int_total = torch.zeros((), dtype=torch.int64, device=device)

    def _add(self, v):
        if not torch.is_floating_point(v):
            self.int_total += v
        else:
            self.float_total += v

    def update(self, loss, labels):
        self._add(loss.detach())
        self._add((labels != -100).sum())
