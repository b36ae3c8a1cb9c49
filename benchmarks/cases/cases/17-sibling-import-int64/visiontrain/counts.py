import torch


def correct_top1(logits, target):
    return (logits.argmax(dim=1) == target).sum()
