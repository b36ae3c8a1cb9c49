"""Builds the model for a bfloat16 run."""


def build(model_factory, device):
    model = model_factory()
    return model.to(device).bfloat16()
