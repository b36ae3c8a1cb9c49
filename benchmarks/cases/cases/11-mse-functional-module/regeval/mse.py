import torch
from torchmetrics import Metric

from .functional import _mse_compute, _mse_update


class MeanSquaredError(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("sum_squared_error", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds, target):
        sse, n_obs = _mse_update(preds, target)
        self.sum_squared_error += sse
        self.total += n_obs

    def compute(self):
        return _mse_compute(self.sum_squared_error, self.total)
