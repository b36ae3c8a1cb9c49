import torch


class PackedDatasetStats:
    def __init__(self):
        self.token_count = torch.zeros(())
        self.sequences = 0

    def observe(self, attention_mask):
        self.token_count += (attention_mask == 1).sum().to(torch.float32)
        self.sequences += attention_mask.shape[0]
