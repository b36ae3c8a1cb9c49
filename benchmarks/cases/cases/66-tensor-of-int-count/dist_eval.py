import torch
import torch.distributed as dist


@torch.no_grad()
def distributed_token_count(loader, device):
    n_tokens = 0
    for batch in loader:
        n_tokens += int((batch["labels"] != -100).sum())
    total = torch.tensor(n_tokens, device=device)
    dist.all_reduce(total)
    return total.item()
