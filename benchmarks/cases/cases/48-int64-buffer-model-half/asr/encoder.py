import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim, layers):
        super().__init__()
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(layers))
        self.register_buffer("frames_seen", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, feats, pad_mask):
        if self.training:
            self.frames_seen += (~pad_mask).sum()
        for layer in self.layers:
            feats = layer(feats, src_key_padding_mask=pad_mask)
        return feats
