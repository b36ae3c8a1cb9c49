import torch


class CorpusStats:
    def __init__(self, device="cpu"):
        self.chars = torch.zeros((), device=device)
        self.docs = 0

    def update(self, batch):
        for text in batch["text"]:
            self.chars += len(text)
        self.docs += len(batch["text"])

    def mean_chars(self):
        return self.chars.item() / max(self.docs, 1)
