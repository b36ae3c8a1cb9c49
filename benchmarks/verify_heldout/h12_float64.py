import torch


def huge_count(shards):
    n = torch.zeros(1, dtype=torch.float64)
    for s in shards:
        n += s.numel()
    print(n.item())
