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
    for key, field in (("c", value.cls), ("v", value.via), ("s", value.dtype_source)):
        if field is not None:
            data[key] = field
    return data


def value_from_data(data: dict[str, Any] | None) -> Value:
    if not data:
        return UNKNOWN
    flags = set(data.get("f", ()))
    return Value(
        kind=Kind(data["k"]),
        dtype=_DTYPES.get(data.get("d", "")),
        zero_dim=data.get("z"),
        float_count=FLOAT_COUNT_ELSEWHERE if "float_count" in flags else 0,
        elements=tuple(value_from_data(v) for v in data.get("e", ())),
        items=tuple((key, value_from_data(v)) for key, v in data.get("i", ())),
        cls=data.get("c"),
        via=data.get("v"),
        dtype_source=data.get("s"),
        **{name: name in flags for name in _FLAGS},
    )


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
