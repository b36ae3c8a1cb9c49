import torch


def split_counts(batches, count_all):
    tally = torch.zeros(1)
    for b in batches:
        if count_all:
            tally += b.numel()
        else:
            tally += (b > 0).sum()
    print(tally.item())
