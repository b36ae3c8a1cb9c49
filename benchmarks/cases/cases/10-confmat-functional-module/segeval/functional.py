import torch


def _confusion_update(preds, target, num_classes, ignore_index=None):
    if preds.ndim == target.ndim + 1:
        preds = preds.argmax(dim=1)
    preds, target = preds.flatten(), target.flatten()
    if ignore_index is not None:
        keep = target != ignore_index
        preds, target = preds[keep], target[keep]
    unique = target * num_classes + preds
    counts = torch.bincount(unique, minlength=num_classes * num_classes)
    return counts.reshape(num_classes, num_classes)


def _confusion_compute(confmat, normalize=None):
    if normalize == "true":
        return confmat / confmat.sum(dim=1, keepdim=True).clamp(min=1)
    return confmat
