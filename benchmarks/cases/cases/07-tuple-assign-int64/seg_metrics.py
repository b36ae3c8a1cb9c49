import torch


class PixelAccuracy:
    def __init__(self, ignore_index=255):
        self.ignore_index = ignore_index
        self.hits, self.total = torch.zeros((), dtype=torch.int64), torch.zeros((), dtype=torch.int64)

    def update(self, logits, target):
        pred = logits.argmax(dim=1)
        valid = target != self.ignore_index
        self.hits += ((pred == target) & valid).sum()
        self.total += valid.sum()

    def compute(self):
        return self.hits.double() / self.total.clamp(min=1).double()
