import torch
import torch.nn as nn


class Retriever(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.register_buffer("in_batch_hits", torch.zeros(()), persistent=False)
        self.register_buffer("queries", torch.zeros(()), persistent=False)

    def forward(self, q_ids, d_ids):
        q = self.encoder(q_ids)
        d = self.encoder(d_ids)
        scores = q @ d.T
        target = torch.arange(q.shape[0], device=q.device)
        with torch.no_grad():
            self.in_batch_hits += (scores.argmax(dim=1) == target).sum()
            self.queries += q.shape[0]
        return nn.functional.cross_entropy(scores.float(), target)
