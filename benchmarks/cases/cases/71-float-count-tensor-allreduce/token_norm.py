import torch
import torch.distributed as dist


def normalized_loss(loss_sum, batch, device, pad_id=0):
    n_local = float((batch["input_ids"] != pad_id).sum())
    n_global = torch.tensor(n_local, device=device)
    dist.all_reduce(n_global)
    return loss_sum * dist.get_world_size() / n_global
