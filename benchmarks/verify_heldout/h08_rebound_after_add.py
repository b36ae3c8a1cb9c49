import torch


def smoothed_zero_count(grads):
    acc = torch.zeros(1)
    for g in grads:
        acc += (g == 0).sum()
        acc = acc * 0.5 + acc * 0.5
    print(acc.item())
