import torch


class ClassPixelCounter:
    """Pixel frequency per class over a dataset, for ENet-style class weights."""

    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.pixels = torch.zeros(num_classes, dtype=torch.float32)

    def update(self, target):
        per_class = []
        for c in range(self.num_classes):
            per_class.append(int((target == c).sum()))
        self.pixels += torch.tensor(per_class, dtype=torch.float32)

    def class_weights(self, c=1.02):
        freq = self.pixels / self.pixels.sum()
        return 1.0 / torch.log(c + freq)
