import torch
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision

from .normalize import RunningMeanStd


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=1024):
        super().__init__()
        self.obs_norm = RunningMeanStd(obs_dim)
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, act_dim))

    def forward(self, obs):
        if self.training:
            self.obs_norm.update(obs)
        return self.net(self.obs_norm(obs))


def wrap_policy(obs_dim, act_dim):
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    return FSDP(Policy(obs_dim, act_dim), mixed_precision=mp, device_id=torch.cuda.current_device())
