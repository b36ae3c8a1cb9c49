import torch


def predicted_tm_score(pae_logits, bin_centers, token_mask):
    """pTM from predicted-aligned-error logits [B, N, N, bins]."""
    probs = pae_logits.softmax(dim=-1)
    n_tokens = token_mask.bool().sum(dim=-1).to(pae_logits.dtype)
    d0 = 1.24 * (n_tokens.clamp(min=19) - 15) ** (1.0 / 3) - 1.8
    tm_term = 1.0 / (1.0 + (bin_centers[None, :] / d0[:, None]) ** 2)
    per_pair = (probs * tm_term[:, None, None, :]).sum(dim=-1)
    pair_mask = token_mask[:, :, None] * token_mask[:, None, :]
    per_row = (per_pair * pair_mask).sum(dim=-1) / n_tokens[:, None]
    return per_row.max(dim=-1).values
