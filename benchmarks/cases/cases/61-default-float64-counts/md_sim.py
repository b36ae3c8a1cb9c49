import torch

torch.set_default_dtype(torch.float64)


def neighbour_statistics(frames, cutoff):
    """Pairs within the cutoff over a long molecular-dynamics trajectory (double precision)."""
    pairs_within = torch.zeros(())
    pairs_total = torch.zeros(())
    for pos in frames:
        d = torch.cdist(pos, pos)
        close = (d < cutoff) & (d > 0)
        pairs_within += close.sum()
        pairs_total += d.numel() - d.shape[0]
    return pairs_within / pairs_total
