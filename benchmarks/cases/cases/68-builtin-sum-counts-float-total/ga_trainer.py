import torch


class GradAccumTrainer:
    def __init__(self, model, optimizer, device="cuda"):
        self.model = model
        self.optimizer = optimizer
        self.tokens_seen = torch.zeros(1, device=device)

    def step(self, micro_batches):
        num_items = sum((mb["labels"] != -100).sum() for mb in micro_batches)
        for mb in micro_batches:
            loss = self.model(**mb, reduction="sum").loss / num_items
            loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.tokens_seen += num_items
