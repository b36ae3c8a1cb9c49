import torch

from .model import TinyLM


def build(cfg):
    model = TinyLM(cfg).cuda()
    model = model.to(torch.bfloat16)
    return model, torch.optim.AdamW(model.parameters(), lr=cfg.lr)
