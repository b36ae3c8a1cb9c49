import torch


def finite_entries(tensors):
    total = torch.zeros(1).cuda()
    for t in tensors:
        total += torch.isfinite(t).sum()
    print(total.item())
