import torch


def sinusoid_table(seq_len, dim, device="cpu"):
    pos = torch.arange(seq_len, device=device, dtype=torch.float32)
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    phase = pos[:, None] @ inv[None, :]
    return torch.cat([phase.sin(), phase.cos()], dim=-1)


@torch.inference_mode()
def embed_documents(model, batches):
    model = model.float().eval()
    out = []
    for ids in batches:
        table = sinusoid_table(ids.shape[1], model.dim)
        out.append(model(ids, table))
    return out
