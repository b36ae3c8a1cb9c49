import torch


def masked_fraction(label_batches):
    ignored = torch.tensor(0.0)
    seen = 0
    for labels in label_batches:
        ignored += (labels == -100).sum()
        seen += labels.numel()
    print(ignored.item(), seen)
