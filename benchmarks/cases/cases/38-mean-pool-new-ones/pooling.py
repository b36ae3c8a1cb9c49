import torch.nn as nn


class MaskedMeanPool(nn.Module):
    def forward(self, hidden, attention_mask):
        ones = hidden.new_ones(hidden.shape[:2])
        valid = ones.masked_fill(attention_mask == 0, 0.0)
        lengths = valid.sum(dim=1, keepdim=True)
        summed = (hidden * valid.unsqueeze(-1)).sum(dim=1)
        return summed / lengths.clamp(min=1)
