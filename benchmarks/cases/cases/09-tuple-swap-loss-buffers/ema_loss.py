import torch


def smoothed_losses(losses, device="cpu"):
    prev, cur = torch.zeros((), device=device), torch.zeros((), device=device)
    history = []
    for loss in losses:
        prev, cur = cur, 0.9 * cur + 0.1 * loss.detach()
        history.append((cur - prev).abs().item())
    return history
