import torch


@torch.no_grad()
def heldout_token_accuracy(model, loader, pad_label=-100):
    """Next-token accuracy over a held-out shard of the pretraining corpus."""
    model.eval()
    correct_total = torch.tensor(0.0)
    seen_total = torch.tensor(0.0)
    for tokens, labels in loader:
        scores = model(tokens)
        keep = labels != pad_label
        n_correct, n_seen = ((scores.argmax(-1) == labels) & keep).sum(), keep.sum()
        correct_total += n_correct
        seen_total += n_seen
    return correct_total / seen_total
