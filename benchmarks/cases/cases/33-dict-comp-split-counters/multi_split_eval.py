import torch


class SplitTokenCounter:
    def __init__(self, splits, device="cpu"):
        self.seen = {split: torch.zeros((), device=device) for split in splits}

    def update(self, split, attention_mask):
        self.seen[split] += (attention_mask == 1).sum()

    def report(self):
        return {split: int(n.item()) for split, n in self.seen.items()}
