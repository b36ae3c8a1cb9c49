import torch
import torch.distributed as dist


@torch.no_grad()
def distributed_loss(model, loader, device):
    loss_sum = 0.0
    n_tokens = 0
    for batch in loader:
        out = model(**batch)
        n = int((batch["labels"] != -100).sum())
        loss_sum += out.loss.item() * n
        n_tokens += n
    loss_t = torch.tensor([loss_sum], device=device)
    count_t = torch.tensor([n_tokens], dtype=torch.long, device=device)
    dist.all_reduce(loss_t)
    dist.all_reduce(count_t)
    return (loss_t / count_t).item()
