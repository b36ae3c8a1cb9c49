from megatron.core.transformer.module import Float16Module

from .gpt import build_gpt


def model_provider(config):
    model = build_gpt(config)
    if config.bf16 or config.fp16:
        model = Float16Module(config, model)
    return model
