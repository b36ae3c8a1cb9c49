import torch


def image_rotary(grid_h, grid_w, dim, offset=65536, theta=10000.0, device="cuda"):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        ids = torch.arange(grid_h * grid_w, device=device, dtype=torch.float32) + offset
        inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim)
        freqs = ids[:, None] @ inv_freq[None, :]
        return torch.polar(torch.ones_like(freqs), freqs)
