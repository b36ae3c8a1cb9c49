import deepspeed

from .model import Retriever

DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 512,
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 2},
}


def launch(encoder, params):
    engine, optimizer, _, _ = deepspeed.initialize(
        model=Retriever(encoder), model_parameters=params, config=DS_CONFIG
    )
    return engine, optimizer
