import torch


def _mse_update(preds, target):
    diff = preds.float() - target.float()
    return torch.sum(diff * diff), target.numel()


def _mse_compute(sum_squared_error, n_obs):
    return sum_squared_error / n_obs
