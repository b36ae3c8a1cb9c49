import torch


class BatchStats:
    def __init__(self, pad_id):
        self.pad_id = pad_id

    def tokens(self, batch):
        return (batch["input_ids"] != self.pad_id).sum()

    def sequences(self, batch):
        return batch["input_ids"].shape[0]


class Trainer:
    def __init__(self, model, optimizer, pad_id, device="cuda"):
        self.model = model
        self.optimizer = optimizer
        self.stats = BatchStats(pad_id)
        self.total_tokens = torch.zeros(1, device=device)
        self.total_sequences = 0

    def step(self, batch):
        loss = self.model(**batch).loss
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.total_tokens += self.stats.tokens(batch)
        self.total_sequences += self.stats.sequences(batch)
        return loss.detach()
