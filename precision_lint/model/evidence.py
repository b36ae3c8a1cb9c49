"""What a module shows about the precision its model runs in: a whole-model cast
(`model.bfloat16()`, `Float16Module`, FSDP `MixedPrecision`, `torch_dtype=`), autocast
(`torch.autocast`, a GradScaler, `bf16=True` training arguments), or a default dtype
(`torch.set_default_dtype`). Read off the calls the model interpreted; the project
index gathers it from every module, and findings on the model's run-time dtype are
raised (or kept) by it."""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from . import torch_api as api
from .dtypes import BFLOAT16, FLOAT16, FLOAT64
from .values import Kind

if TYPE_CHECKING:  # conditions.py reads the kinds above in runs that parse nothing
    import libcst as cst

    from .semantic import SemanticModel

HALF = "half"  # parameters and buffers cast to bfloat16/float16
AUTOCAST = "autocast"  # matmul-like ops run in bfloat16/float16
DEFAULT_HALF = "default-half"  # factories without dtype= make bfloat16/float16
DEFAULT_DOUBLE = "default-double"  # ... or float64

_HALF_DTYPES = (BFLOAT16, FLOAT16)
_KEYWORDS = frozenset({"torch_dtype", "bf16", "fp16", "precision"})  # the arguments that tell a precision


class Seen(NamedTuple):
    kind: str
    node: cst.Call


def collect_evidence(model: SemanticModel) -> list[Seen]:
    seen = []
    for fact in model.calls:
        kind = _kind(fact, model)
        if kind is not None:
            seen.append(Seen(kind, fact.node))
    return seen


def _kind(fact, model: SemanticModel) -> str | None:
    node = fact.node
    name = fact.qualified or fact.method or ""
    if fact.method in ("half", "bfloat16") and _module_like(node.func.value, model):
        return HALF
    if fact.method == "to" and _module_like(node.func.value, model) and any(
        _half(model, arg.value) for arg in node.args
    ):
        return HALF
    if name.endswith(("Float16Module", "MixedPrecision")) and any(_half(model, a.value) for a in node.args):
        return HALF
    if name.endswith("Float16Module"):
        return HALF
    for arg in node.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword not in _KEYWORDS:
            continue
        import libcst as cst  # here, not for every call: importing for each cost 0.1 s on Megatron-LM

        if keyword == "torch_dtype" and _half(model, arg.value):
            return HALF
        if keyword in ("bf16", "fp16") and type(arg.value) is cst.Name and arg.value.value == "True":
            return AUTOCAST
        if keyword == "precision" and type(arg.value) is cst.SimpleString:
            text = str(arg.value.evaluated_value)
            if "16" in text:
                return HALF if "true" in text else AUTOCAST
    if fact.qualified in api.AUTOCAST_CONTEXTS:
        from .autocast import region_of  # imports libcst

        return AUTOCAST if region_of(node, fact.qualified, lambda arg: _dtype(model, arg)) else None
    if fact.qualified is not None and fact.qualified.endswith("GradScaler"):
        return AUTOCAST
    if fact.qualified == "torch.set_default_dtype" and node.args:
        dtype = model.value_of(node.args[0].value)
        if dtype.kind is Kind.DTYPE and dtype.dtype in _HALF_DTYPES:
            return DEFAULT_HALF
        if dtype.kind is Kind.DTYPE and dtype.dtype == FLOAT64:
            return DEFAULT_DOUBLE
    return None


def _half(model: SemanticModel, node: cst.BaseExpression) -> bool:
    return _dtype(model, node) in _HALF_DTYPES


def _dtype(model: SemanticModel, node: cst.BaseExpression):
    value = model.value_of(node)
    return value.dtype if value.kind is Kind.DTYPE else None


def _module_like(receiver: cst.BaseExpression, model: SemanticModel) -> bool:
    """`model.half()`, `self.bfloat16()`, `self.encoder.to(torch.bfloat16)`: a receiver
    that is a module (an instance, `self`, or named like one), not a tensor."""
    import libcst as cst

    value = model.value_of(receiver)
    if value.kind in (Kind.SELF, Kind.INSTANCE):
        return True
    if value.is_tensor:
        return False
    while type(receiver) is cst.Call and type(receiver.func) is cst.Attribute:
        receiver = receiver.func.value  # `net.to("cuda").half()`: what `.to` was called on
    name = receiver.attr.value if type(receiver) is cst.Attribute else getattr(receiver, "value", "")
    if not isinstance(name, str):
        return False
    return any(word in name.lower() for word in api.MODULE_WORDS)

