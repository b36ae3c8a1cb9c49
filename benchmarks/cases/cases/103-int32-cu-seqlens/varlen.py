import torch
import torch.nn.functional as F


def unpad_for_varlen_attention(hidden, attention_mask):
    seqlens = attention_mask.sum(dim=-1, dtype=torch.int32)
    indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
    max_seqlen = int(seqlens.max())
    cu_seqlens = F.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
    return hidden.flatten(0, 1)[indices], indices, cu_seqlens, max_seqlen
