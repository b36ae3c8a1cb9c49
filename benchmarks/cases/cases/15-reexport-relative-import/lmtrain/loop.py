import torch

from . import count_loss_tokens


class TrainLoop:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.consumed_tokens = torch.tensor(0.0, device=device)

    def run(self, loader):
        for batch in loader:
            out = self.model(input_ids=batch["input_ids"], labels=batch["labels"])
            out.loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.consumed_tokens += count_loss_tokens(batch["labels"])
