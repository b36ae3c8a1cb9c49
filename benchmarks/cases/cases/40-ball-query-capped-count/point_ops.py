import torch


def ball_query_mean(features, dists, radius, max_neighbors=32):
    """Average the features of at most `max_neighbors` points within `radius`.

    features: [B, N, C]; dists: [B, M, N] distances from M centres to N points.
    """
    in_ball = dists < radius
    order = torch.argsort(in_ball.to(torch.int8), dim=-1, descending=True)
    idx = order[..., :max_neighbors]
    taken = torch.gather(in_ball, -1, idx)
    n_neighbors = taken.sum(dim=-1, keepdim=True).to(features.dtype)
    batch = torch.arange(features.shape[0], device=features.device)[:, None, None]
    gathered = features[batch, idx]
    summed = (gathered * taken.unsqueeze(-1).to(features.dtype)).sum(dim=2)
    return summed / n_neighbors.clamp(min=1)
