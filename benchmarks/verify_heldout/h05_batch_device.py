import torch


def tokens_kept(batch, chunks):
    kept = torch.zeros(batch.size(0), device=batch.device)
    for chunk in chunks:
        kept += (chunk != 0).sum()
    print(kept.sum().item())
