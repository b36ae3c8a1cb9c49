import torch


class ThroughputLogger:
    def __init__(self, device):
        self.stats = {}
        self.stats["tokens"] = torch.zeros((), dtype=torch.int64, device=device)
        self.stats["loss"] = torch.zeros((), device=device)

    def update(self, batch, loss):
        self.stats["tokens"] += batch["attention_mask"].bool().sum()
        self.stats["loss"] += loss.detach()
