import torch


def negative_updates(deltas):
    below = torch.zeros(1, dtype=torch.bfloat16)
    for d in deltas:
        below += (d < 0).sum()
    print(float(below))
