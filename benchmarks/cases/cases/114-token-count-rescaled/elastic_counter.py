import torch


class ElasticTokenCounter:
    def __init__(self, device="cuda"):
        self.tokens = torch.zeros((), device=device)

    def update(self, labels):
        self.tokens += (labels != -100).sum()

    def on_world_size_change(self, old_world, new_world):
        self.tokens = self.tokens * (new_world / old_world)

    def value(self):
        return self.tokens.item()
