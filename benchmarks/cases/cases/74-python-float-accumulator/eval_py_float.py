import torch


@torch.no_grad()
def evaluate(model, loader):
    total_tokens = 0.0
    total_loss = 0.0
    for batch in loader:
        out = model(**batch)
        n = float((batch["labels"] != -100).sum())
        total_tokens += n
        total_loss += out.loss.item() * n
    return total_loss / max(total_tokens, 1.0)
