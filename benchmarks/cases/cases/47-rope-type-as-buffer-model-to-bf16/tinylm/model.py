import torch.nn as nn

from .rotary import Rotary


class TinyLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.rotary = Rotary(cfg.dim // cfg.heads)
        self.blocks = nn.ModuleList(cfg.block(cfg) for _ in range(cfg.layers))

    def forward(self, ids):
        cos, sin = self.rotary(ids.shape[1])
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h, cos, sin)
        return h
