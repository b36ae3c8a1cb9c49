import torch


@torch.no_grad()
def codebook_usage(vq_model, loader, codebook_size, device="cuda"):
    usage = torch.zeros(codebook_size, device=device)
    for images in loader:
        codes = vq_model.encode(images.to(device))
        usage += torch.bincount(codes.flatten(), minlength=codebook_size).float()
    probs = usage / usage.sum()
    perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
    return usage, perplexity
