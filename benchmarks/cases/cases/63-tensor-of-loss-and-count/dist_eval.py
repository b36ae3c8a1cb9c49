import torch
import torch.distributed as dist


@torch.no_grad()
def distributed_perplexity(model, loader, device):
    loss_sum = 0.0
    n_tokens = 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model(**batch)
        n = int((batch["labels"] != -100).sum())
        loss_sum += out.loss.item() * n
        n_tokens += n
    stats = torch.tensor([loss_sum, n_tokens], device=device)
    dist.all_reduce(stats)
    return torch.exp(stats[0] / stats[1]).item()
