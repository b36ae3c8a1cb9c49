import torch


def tokens_this_step(micro_batches):
    n_tokens = torch.zeros([], dtype=torch.int32)
    for mb in micro_batches:
        n_tokens += (mb["labels"] != -100).sum()
    print(n_tokens.item())
