import time

import torch


class ThroughputLogger:
    def __init__(self, device):
        self.stats = {}
        self.stats["tokens"] = torch.zeros((), device=device)
        self.stats["loss"] = torch.zeros((), device=device)
        self.stats["steps"] = 0
        self.start = time.time()

    def update(self, batch, loss):
        self.stats["tokens"] += batch["attention_mask"].bool().sum()
        self.stats["loss"] += loss.detach()
        self.stats["steps"] += 1

    def summary(self):
        elapsed = time.time() - self.start
        return {
            "tokens": self.stats["tokens"].item(),
            "tokens_per_s": self.stats["tokens"].item() / elapsed,
            "mean_loss": self.stats["loss"].item() / max(self.stats["steps"], 1),
        }
