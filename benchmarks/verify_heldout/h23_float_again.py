import torch


def zero_count_as_float(grads):
    acc = torch.zeros(1)
    for g in grads:
        acc += (g == 0).sum()
        acc = acc.float()
    print(acc.item())
