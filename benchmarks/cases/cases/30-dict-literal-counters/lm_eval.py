import torch


@torch.no_grad()
def next_token_accuracy(model, loader, device):
    model.eval()
    totals = {
        "correct": torch.zeros((), device=device),
        "seen": torch.zeros((), device=device),
        "loss": torch.zeros((), device=device),
    }
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model(**batch)
        labels = batch["labels"][:, 1:]
        pred = out.logits[:, :-1].argmax(-1)
        mask = labels != -100
        totals["correct"] += (pred.eq(labels) & mask).sum()
        totals["seen"] += mask.sum()
        totals["loss"] += out.loss.detach() * mask.sum()
    model.train()
    return {k: v.item() for k, v in totals.items()}
