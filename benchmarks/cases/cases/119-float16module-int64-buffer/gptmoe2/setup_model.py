from megatron.core.transformer.module import Float16Module

from .moe_layer import MoELayer


def model_provider(config):
    layers = [MoELayer(config, config.make_router(), config.make_experts(), config.num_moe_experts)
              for _ in range(config.num_layers)]
    model = config.wrap(layers)
    if config.bf16:
        model = Float16Module(config, model)
    return model
