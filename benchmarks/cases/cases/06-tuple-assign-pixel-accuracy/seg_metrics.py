import torch


class PixelAccuracy:
    """Running pixel accuracy for semantic segmentation."""

    def __init__(self, ignore_index=255, device="cpu"):
        self.ignore_index = ignore_index
        self.device = device
        self.reset()

    def reset(self):
        self.correct, self.labelled = torch.zeros((), device=self.device), torch.zeros((), device=self.device)

    @torch.no_grad()
    def update(self, logits, target):
        pred = logits.argmax(dim=1)
        valid = target != self.ignore_index
        self.correct += ((pred == target) & valid).sum()
        self.labelled += valid.sum()

    def compute(self):
        return (self.correct / self.labelled.clamp(min=1)).item()
