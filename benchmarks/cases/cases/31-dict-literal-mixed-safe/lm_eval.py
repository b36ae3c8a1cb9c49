import torch


@torch.no_grad()
def validation_summary(model, loader, device):
    totals = {
        "loss": torch.zeros((), device=device),
        "tokens": torch.zeros((), dtype=torch.long, device=device),
        "batches": 0,
    }
    for batch in loader:
        out = model(**batch)
        n = (batch["labels"] != -100).sum()
        totals["loss"] += out.loss.detach() * n
        totals["tokens"] += n
        totals["batches"] += 1
    return totals["loss"].item() / max(totals["tokens"].item(), 1)
