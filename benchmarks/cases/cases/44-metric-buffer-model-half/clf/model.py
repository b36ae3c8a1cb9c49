import torch.nn as nn

from .metrics import RunningAccuracy


class Classifier(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(backbone.out_dim, num_classes)
        self.train_acc = RunningAccuracy()

    def forward(self, images, target=None):
        logits = self.head(self.backbone(images))
        if target is not None:
            self.train_acc.update(logits, target)
        return logits
