import torch


class StreamingMSE:
    def __init__(self):
        self.states = {
            "sum_sq": torch.zeros(()),
            "n_obs": torch.zeros((), dtype=torch.long),
        }

    def to(self, dtype):
        for k, v in self.states.items():
            if not torch.is_floating_point(v):
                continue
            self.states[k] = v.to(dtype)
        return self

    def update(self, preds, target):
        self.states["sum_sq"] += ((preds.float() - target.float()) ** 2).sum().to(self.states["sum_sq"].dtype)
        self.states["n_obs"] += preds.numel()

    def compute(self):
        return self.states["sum_sq"].float() / self.states["n_obs"]


def make_metric():
    return StreamingMSE().to(torch.float16)
