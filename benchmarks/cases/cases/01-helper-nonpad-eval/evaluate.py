import torch
import torch.nn.functional as F

IGNORE_INDEX = -100


def count_supervised(labels, ignore_index=IGNORE_INDEX):
    """Number of label positions that take part in the loss."""
    return (labels != ignore_index).sum()


class Evaluator:
    def __init__(self, model, loader, device="cuda"):
        self.model = model
        self.loader = loader
        self.device = device

    @torch.no_grad()
    def run(self):
        self.model.eval()
        loss_total = torch.zeros((), device=self.device)
        tokens_total = torch.zeros((), device=self.device)
        for batch in self.loader:
            input_ids = batch["input_ids"].to(self.device)
            labels = batch["labels"].to(self.device)
            logits = self.model(input_ids)
            loss = F.cross_entropy(
                logits.flatten(0, 1), labels.flatten(),
                ignore_index=IGNORE_INDEX, reduction="sum",
            )
            loss_total += loss
            tokens_total += count_supervised(labels)
        self.model.train()
        return (loss_total / tokens_total).item()
