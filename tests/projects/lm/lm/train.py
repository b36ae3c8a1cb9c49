"""The training loop."""
import torch

from .launch import build
from .metrics.tokens import loss_and_count
from .moe import tokens_per_expert


def train(model_factory, loader, optimizer):
    model = build(model_factory, "cuda")
    step_tokens = torch.zeros((), dtype=torch.int64, device="cuda")
    for batch in loader:
        loss, n = loss_and_count(model(batch["input_ids"]), batch["labels"])
        (loss / n).backward()
        optimizer.step()
        step_tokens += n
        print(tokens_per_expert(model.hidden, batch["expert_ids"], 8))
    return step_tokens.item()
