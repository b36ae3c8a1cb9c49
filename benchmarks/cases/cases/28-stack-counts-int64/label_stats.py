import torch


class LabelCounter(torch.nn.Module):
    def __init__(self, num_labels):
        super().__init__()
        self.num_labels = num_labels
        self.register_buffer("counts", torch.zeros(num_labels, dtype=torch.long))

    @torch.no_grad()
    def forward(self, labels):
        per_label = [(labels == k).sum() for k in range(self.num_labels)]
        self.counts += torch.stack(per_label)
        return labels
