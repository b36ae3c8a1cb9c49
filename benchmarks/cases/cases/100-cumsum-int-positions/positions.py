import torch
import torch.nn as nn


class LearnedPositions(nn.Module):
    def __init__(self, max_positions, dim):
        super().__init__()
        self.wpe = nn.Embedding(max_positions, dim)

    def forward(self, attention_mask):
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids = position_ids.masked_fill(attention_mask == 0, 1)
        return self.wpe(position_ids)
