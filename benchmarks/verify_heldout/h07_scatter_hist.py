import torch


def expert_load(routing, num_experts=8):
    load = torch.zeros(num_experts)
    for idx in routing:
        load.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.float))
    print(load.tolist())
