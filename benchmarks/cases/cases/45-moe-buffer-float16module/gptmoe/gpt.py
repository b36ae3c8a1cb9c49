import torch.nn as nn

from .moe_layer import MoELayer


def build_gpt(config):
    layers = [MoELayer(config, config.make_router(), config.make_experts(), config.num_moe_experts)
              for _ in range(config.num_layers)]
    return nn.Sequential(*layers)
