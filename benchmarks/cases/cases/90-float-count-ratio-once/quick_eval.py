import torch


@torch.no_grad()
def batch_report(logits, target):
    correct = (logits.argmax(dim=-1) == target).sum()
    total = torch.tensor(target.numel())
    accuracy = correct.float() / total.float()
    return {"accuracy": accuracy.item(), "correct": int(correct), "total": int(total)}
