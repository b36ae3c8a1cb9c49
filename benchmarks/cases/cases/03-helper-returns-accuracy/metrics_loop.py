import torch


def batch_accuracy(logits, target):
    """Fraction of correct predictions in one batch."""
    return (logits.argmax(dim=-1) == target).float().mean()


class AccuracyTracker:
    def __init__(self, device):
        self.acc_sum = torch.zeros((), device=device)
        self.batches = 0

    def update(self, logits, target):
        self.acc_sum += batch_accuracy(logits, target)
        self.batches += 1

    def compute(self):
        return self.acc_sum / max(self.batches, 1)
