"""The training loop."""
import torch

from .metrics.tokens import loss_and_count


def train(model, loader, optimizer):
    step_tokens = torch.zeros((), dtype=torch.int64, device="cuda")
    for batch in loader:
        loss, n = loss_and_count(model(batch["input_ids"]), batch["labels"])
        (loss / n).backward()
        optimizer.step()
        step_tokens += n
    return step_tokens.item()
