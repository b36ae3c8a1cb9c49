import torch
import torch.nn as nn


class RopeCache(nn.Module):
    def __init__(self, head_dim, base=500000.0):
        super().__init__()
        exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim
        self.register_buffer("inv_freq", 1.0 / base**exponents, persistent=False)

    @torch.no_grad()
    def forward(self, q, positions):
        device_type = q.device.type if q.device.type != "mps" else "cpu"
        with torch.autocast(device_type=device_type, enabled=False):
            freq = self.inv_freq.float()[None, :, None].expand(positions.size(0), -1, 1)
            pos = positions.float()[:, None, :]
            angles = torch.matmul(freq, pos).transpose(1, 2)
            angles = torch.cat([angles, angles], dim=-1)
        return angles.cos().to(q.dtype), angles.sin().to(q.dtype)
