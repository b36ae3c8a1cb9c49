import torch
from torchmetrics import Metric

from .functional import _confusion_compute, _confusion_update


class ConfusionMatrix(Metric):
    full_state_update = False

    def __init__(self, num_classes, ignore_index=None, normalize=None, **kwargs):
        super().__init__(**kwargs)
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.normalize = normalize
        self.add_state("confmat", default=torch.zeros(num_classes, num_classes), dist_reduce_fx="sum")

    def update(self, preds, target):
        self.confmat += _confusion_update(preds, target, self.num_classes, self.ignore_index)

    def compute(self):
        return _confusion_compute(self.confmat, self.normalize)
