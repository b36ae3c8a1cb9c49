"""Token bookkeeping shared by training and evaluation."""
import torch
import torch.nn.functional as F

IGNORE_INDEX = -100


def count_targets(labels, ignore_index=IGNORE_INDEX):
    """How many label positions take part in the loss."""
    return (labels != ignore_index).sum()


def loss_and_count(logits, labels):
    loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX, reduction="sum")
    return loss, count_targets(labels)


def mean_loss(logits, labels):
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX)
