import torch


def length_outliers(texts, z=3.0):
    lengths = torch.tensor([len(t) for t in texts], dtype=torch.float32)
    mean, std = lengths.mean(), lengths.std()
    return [t for t, n in zip(texts, lengths.tolist()) if abs(n - mean.item()) > z * std.item()]
