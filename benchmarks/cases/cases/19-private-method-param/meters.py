import torch


class TokenThroughputMeter:
    def __init__(self, device="cuda"):
        self._tokens = torch.zeros((), device=device)
        self._steps = 0

    def _add(self, n):
        self._tokens += n

    def update(self, attention_mask):
        self._add(torch.count_nonzero(attention_mask))
        self._steps += 1

    def tokens_per_step(self):
        return self._tokens.item() / max(self._steps, 1)
