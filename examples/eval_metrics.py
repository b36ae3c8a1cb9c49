"""Evaluation counters in shapes common to training code (written for this repository)."""
import torch


class TokenAccuracy:
    """Running token accuracy over an evaluation set."""

    def __init__(self, ignore_index=-100):
        self.ignore_index = ignore_index
        self._correct = torch.tensor(0.0)
        self._seen = torch.tensor(0.0)

    def update(self, logits, labels):
        valid = labels != self.ignore_index
        predictions = logits.argmax(dim=-1)
        self._correct += ((predictions == labels) & valid).sum()
        self._seen += valid.sum()

    def compute(self):
        return self._correct.item() / max(self._seen.item(), 1)


def confusion_counts(batches, num_classes):
    """Per-class true positives and support, as a float tensor (the torchmetrics bug)."""
    stats = torch.zeros(2, num_classes)
    for predictions, targets in batches:
        for c in range(num_classes):
            stats[0, c] += ((predictions == c) & (targets == c)).sum()
            stats[1, c] += (targets == c).sum()
    stats /= len(batches)
    return stats


def mean_loss(batches, model):
    """A float accumulator of floats: not a hazard, and not flagged."""
    total = torch.zeros(1)
    for batch in batches:
        total += model(batch).loss.detach()
    return total / len(batches)
