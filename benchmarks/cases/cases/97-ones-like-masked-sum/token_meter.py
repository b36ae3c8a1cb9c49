import torch


class TokenMeter:
    def __init__(self, pad_id, device="cuda"):
        self.pad_id = pad_id
        self.tokens_seen = torch.zeros((), device=device)

    def update(self, input_ids):
        valid = torch.ones_like(input_ids).masked_fill(input_ids == self.pad_id, 0)
        self.tokens_seen += valid.sum()
