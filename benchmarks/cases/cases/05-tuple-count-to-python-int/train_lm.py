import torch
import torch.nn.functional as F


def masked_lm_loss(logits, labels, ignore_index=-100):
    keep = labels.ne(ignore_index)
    loss = F.cross_entropy(logits[keep], labels[keep], reduction="sum")
    return loss, keep.sum()


def train_epoch(model, loader, optimizer, device):
    tokens_seen = 0
    loss_sum_epoch = torch.zeros((), device=device)
    for batch in loader:
        logits = model(batch["input_ids"].to(device))
        loss_sum, n_tokens = masked_lm_loss(logits, batch["labels"].to(device))
        (loss_sum / n_tokens.clamp(min=1)).backward()
        optimizer.step()
        optimizer.zero_grad()
        loss_sum_epoch += loss_sum.detach()
        tokens_seen += n_tokens.item()
    return loss_sum_epoch.item() / max(tokens_seen, 1), tokens_seen
