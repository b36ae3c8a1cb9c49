"""Abstract values and function summaries as plain JSON data: what crosses from one
module's model to another's (and into the cache). Creations do not cross: they are
nodes of the module that made them, so a value from elsewhere has no origins."""
from __future__ import annotations

from typing import Any

from ..model.dtypes import ALL_DTYPES, RUNTIME_FLOAT, DType
from ..model.summaries import FunctionSummary
from ..model.values import FLOAT_COUNT_ELSEWHERE, UNKNOWN, Kind, Value

_DTYPES: dict[str, DType] = {d.name: d for d in ALL_DTYPES + (RUNTIME_FLOAT,)}
_FLAGS = ("count", "mask", "positions", "buffer", "length", "per_row", "flat")
_KINDS: dict[str, Kind] = {kind.value: kind for kind in Kind}
_NAMED_FIELDS = (("c", "cls"), ("v", "via"), ("s", "dtype_source"))


def value_to_data(value: Value) -> dict[str, Any] | None:
    """None for UNKNOWN; otherwise only the fields that differ from the defaults."""
    if value == UNKNOWN:
        return None
    data: dict[str, Any] = {"k": value.kind.value}
    if value.dtype is not None:
        data["d"] = value.dtype.name
    if value.zero_dim is not None:
        data["z"] = value.zero_dim
    flags = [name for name in _FLAGS if getattr(value, name)]
    if value.float_count:
        flags.append("float_count")
    if flags:
        data["f"] = flags
    if value.elements:
        data["e"] = [value_to_data(v) for v in value.elements]
    if value.items:
        data["i"] = [[key, value_to_data(v)] for key, v in value.items]
    for key, name in _NAMED_FIELDS:
        field = getattr(value, name)
        if field is not None:
            data[key] = field
    return data


def value_from_data(data: dict[str, Any] | None) -> Value:
    """The Value value_to_data wrote. Only the fields the data holds are passed: a frozen
    dataclass's __init__ with all of them took 2.5 times as long, and a model asks
    for 80,000 values on Megatron-LM."""
    if not data:
        return UNKNOWN
    fields: dict[str, Any] = {"kind": _KINDS.get(data["k"]) or Kind(data["k"])}
    if "d" in data:
        fields["dtype"] = _DTYPES.get(data["d"])
    if "z" in data:
        fields["zero_dim"] = data["z"]
    for flag in data.get("f", ()):
        if flag == "float_count":
            fields["float_count"] = FLOAT_COUNT_ELSEWHERE
        elif flag in _FLAGS:
            fields[flag] = True
    if "e" in data:
        fields["elements"] = tuple(value_from_data(v) for v in data["e"])
    if "i" in data:
        fields["items"] = tuple((key, value_from_data(v)) for key, v in data["i"])
    for key, name in _NAMED_FIELDS:
        if key in data:
            fields[name] = data[key]
    return Value(**fields)


def summary_to_data(summary: FunctionSummary, where: str | None) -> dict[str, Any]:
    return {
        "params": list(summary.params),
        "positional": summary.positional,
        "self": summary.receives_self,
        "returns": value_to_data(summary.returns.without_origins()),
        "defaults": [[name, value_to_data(value)] for name, value in summary.defaults],
        "where": where,
    }


def summary_from_data(qualified: str, data: dict[str, Any]) -> FunctionSummary:
    return FunctionSummary(
        qualified,
        tuple(data["params"]),
        data["positional"],
        data["self"],
        value_from_data(data["returns"]),
        tuple((name, value_from_data(value)) for name, value in data["defaults"]),
        data.get("where"),
    )
