import torch
import torch.nn.functional as F


def count_supervised(labels, ignore_index=-100):
    return (labels != ignore_index).sum()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    loss_total = torch.zeros((), device=device)
    tokens_total = torch.zeros((), dtype=torch.long, device=device)
    for input_ids, labels in loader:
        input_ids, labels = input_ids.to(device), labels.to(device)
        logits = model(input_ids)
        loss_total += F.cross_entropy(
            logits.view(-1, logits.size(-1)), labels.view(-1), reduction="sum"
        )
        tokens_total += count_supervised(labels)
    model.train()
    return loss_total.item() / max(tokens_total.item(), 1)
