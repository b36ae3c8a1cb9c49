import torch


class LossMeter:
    def __init__(self, device="cuda"):
        self._total = torch.zeros((), device=device)
        self._count = torch.zeros((), dtype=torch.long, device=device)

    def _add(self, value):
        self._total += value

    def update(self, loss, batch_size):
        self._add(loss.detach() * batch_size)
        self._count += batch_size

    def average(self):
        return (self._total / self._count.clamp(min=1)).item()
