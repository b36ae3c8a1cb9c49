"""The dtype the model runs in: RUNTIME_FLOAT, "floating, width chosen at run time".

It is what code gets when it asks for the dtype of the model's data or parameters
(`hidden_states.dtype`, `count.type_as(logits)`, `x.new_ones(n)`, `torch.ones_like(h)`,
the output of an `nn.Linear`): bfloat16 under `model.bfloat16()` or FSDP/DeepSpeed
mixed precision, float16 under `.half()`, float32 otherwise. When a value's dtype is
known, that is what it has; only a value the model could not follow (a parameter,
an attribute) whose name says it is floating data (and no part of it says integer:
`token_ids`, `mask`) is the model's.
"""
from __future__ import annotations

import re

import libcst as cst

from . import torch_api as api
from .dtypes import RUNTIME_FLOAT
from .imports import dotted_name
from .values import Kind, Value

_WORD_BREAK = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")


def names_floating_data(node: cst.BaseExpression, in_module: bool = False) -> str | None:
    """`hidden_states`, `self.proj.weight`, `logits[:, -1]`: the code, when its last
    name says floating data (`x` too in a method of an nn.Module: its input)."""
    base = node
    while type(base) is cst.Subscript:
        base = base.value
    if type(base) is cst.Name:
        name = base.value
    elif type(base) is cst.Attribute:
        name = base.attr.value
    else:
        return None
    parts = _words(name)
    if not parts or any(part in api.INTEGER_DATA_WORDS for part in parts):
        return None
    words = api.FLOATING_DATA_WORDS | (api.MODULE_INPUT_WORDS if in_module else frozenset())
    if not any(part in words for part in parts):
        return None
    return dotted_name(base) or name


def _words(name: str) -> list[str]:
    """`attention_mask`, `posIds` -> ["attention", "mask"], ["pos", "ids"]."""
    return [part.lower() for part in _WORD_BREAK.split(name) if part]


def names_positions(name: str) -> bool:
    """`positions`, `position_ids`, `pos_ids`: a parameter that holds positions."""
    parts = _words(name)
    return any(part in ("pos", "position", "positions") for part in parts) and not any(
        part in ("mask", "embed", "embeds", "embedding", "embeddings", "emb", "bias", "encoding") for part in parts
    )


def names_mask(name: str) -> bool:
    """`mask`, `loss_mask`, `attention_masks`: a parameter that holds a 0/1 mask."""
    return any(part in ("mask", "masks") for part in _words(name))


def dtype_of(node: cst.BaseExpression, value: Value, in_module: bool = False) -> Value | None:
    """What asking `node` (of `value`) for its dtype gives when the dtype is not
    known: the model's dtype for the model's data, None otherwise. `in_module`: the
    code is a method of an nn.Module subclass."""
    if value.is_tensor and value.dtype is RUNTIME_FLOAT:
        return Value(Kind.DTYPE, RUNTIME_FLOAT, dtype_source=value.dtype_source)
    # only a value the model never followed (a parameter, an attribute): a tensor it
    # computed with ops it does not model is not guessed from its name
    if value.kind is not Kind.UNKNOWN or value.count or value.mask:
        return None
    text = names_floating_data(node, in_module)
    if text is None:
        return None
    return Value(Kind.DTYPE, RUNTIME_FLOAT, dtype_source=f"the dtype of `{text}`")


def model_data(source: str) -> Value:
    """Floating data in the model's dtype (the output of a layer, a parameter)."""
    return Value.tensor(RUNTIME_FLOAT).with_source(source)
