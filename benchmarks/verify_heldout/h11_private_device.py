import torch


class PadCounter:
    def __init__(self, pad_id=0):
        self.pad_id = pad_id
        self._device = torch.device("cpu")

    def run(self, sequences):
        pads = torch.zeros(1, device=self._device)
        for seq in sequences:
            pads += (seq == self.pad_id).sum()
        print(pads.item())
