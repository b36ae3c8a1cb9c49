import torch


class PerClassLoss:
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.loss_sum = torch.zeros(num_classes)
        self.batches = 0

    @torch.no_grad()
    def update(self, loss_map, target):
        per_class = []
        for c in range(self.num_classes):
            m = target == c
            per_class.append(loss_map[m].mean().item() if m.any() else 0.0)
        self.loss_sum += torch.tensor(per_class)
        self.batches += 1

    def compute(self):
        return self.loss_sum / max(self.batches, 1)
