import torch


class EpochStats:
    def __init__(self, device):
        self.pixels = torch.zeros((), device=device)
        self.loss = torch.zeros((), device=device)

    def update(self, loss, target, ignore_index=255):
        n = float((target != ignore_index).sum())
        self.pixels += n
        self.loss += loss.detach() * n

    def mean_loss(self):
        return (self.loss / self.pixels).item()
