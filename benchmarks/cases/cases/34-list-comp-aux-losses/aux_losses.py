import torch


class AuxLossTracker:
    def __init__(self, num_layers, device="cuda"):
        self.sums = [torch.zeros((), device=device) for _ in range(num_layers)]
        self.steps = 0

    def record(self, aux_losses):
        for i, loss in enumerate(aux_losses):
            self.sums[i] += loss.detach().float()
        self.steps += 1

    def means(self):
        return [s.item() / max(self.steps, 1) for s in self.sums]
