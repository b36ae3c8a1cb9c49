import torch
import torch.nn as nn


class AxialRope(nn.Module):
    def __init__(self, dim, theta=10000.0):
        super().__init__()
        self.register_buffer(
            "inv_freq", 1.0 / theta ** (torch.arange(0, dim, 4, dtype=torch.float32) / dim), persistent=False
        )

    def forward(self, h, w, device):
        ys = torch.arange(h, device=device, dtype=torch.float32)
        xs = torch.arange(w, device=device, dtype=torch.float32)
        fy = torch.einsum("i,j->ij", ys, self.inv_freq)
        fx = xs[:, None] * self.inv_freq[None, :]
        grid = torch.cat([fy[:, None, :].expand(h, w, -1), fx[None, :, :].expand(h, w, -1)], dim=-1)
        return grid.flatten(0, 1)


def encode(model, images):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(images)
