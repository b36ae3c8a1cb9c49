"""Evaluation over a validation loader."""
import torch

from lm import count_targets
from .metrics import tokens as tk
from .sync import global_count


@torch.no_grad()
def evaluate(model, loader):
    total_tokens = torch.zeros(1, device="cuda")  # expect: PH001
    for batch in loader:
        total_tokens += count_targets(batch["labels"])
    return total_tokens.item()


@torch.no_grad()
def perplexity(model, loader):
    loss_sum = torch.zeros(1, device="cuda")
    seen = torch.tensor(0.0, device="cuda")  # expect: PH001
    for batch in loader:
        loss, n = tk.loss_and_count(model(batch["input_ids"]), batch["labels"])
        loss_sum += loss
        seen += n
    return torch.exp(loss_sum / seen).item()


@torch.no_grad()
def average_loss(model, loader):
    # a float total of losses: not a count
    total = torch.zeros(1, device="cuda")
    for batch in loader:
        total += tk.mean_loss(model(batch["input_ids"]), batch["labels"])
    return total.item() / len(loader)


def tokens_this_step(batch):
    return global_count(count_targets(batch["labels"]))
