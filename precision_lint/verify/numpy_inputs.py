"""Which synthesized inputs of a replay are NumPy arrays. No torch here; NumPy is
imported only to ask which attributes an ndarray has.

An input is an array where the code hands it to NumPy (`np.bincount(ids)`: usage.py
marks it `numpy`) or, in the replay of a NumPy total, by default; and only when
every attribute and method the code reads on it is one an ndarray has
(`x.astype(...)` yes; `x.numel()` or `batch.input_ids` no: those stay a tensor or a
holder, as in torch replays). The child makes the values and hands them over as
arrays (synth.py).
"""
from __future__ import annotations

NUMPY = "numpy"
# what is made as something other than an array: a number, a device, words, ...
NOT_ARRAYS = frozenset({"device", "dtype", "string", "size", "setting", "frequencies", "mapping", "tuple"})


def resolve(spec: dict, default: bool) -> dict:
    """`spec` with the `numpy` role exactly where the child is to make a NumPy array
    (a Python int for a count), in it and in what it holds. `default`: the replay is
    of a NumPy total."""
    roles = set(spec.get("roles", []))
    wanted = NUMPY in roles or default
    roles.discard(NUMPY)
    container = any(spec.get(key) is not None for key in ("elem", "items", "result"))
    if wanted and not container and not roles & NOT_ARRAYS and _ndarray_has(spec):
        roles.add(NUMPY)
    out = {**spec, "roles": sorted(roles)}
    for table in ("attrs", "called_attrs", "items"):
        if spec.get(table):
            out[table] = {k: resolve(v, default) for k, v in spec[table].items()}
    for key in ("elem", "result"):
        if spec.get(key) is not None:
            out[key] = resolve(spec[key], default)
    return out


def _ndarray_has(spec: dict) -> bool:
    try:
        import numpy
    except ImportError:
        return False
    names = list(spec.get("attrs", {})) + list(spec.get("called_attrs", {}))
    return all(hasattr(numpy.ndarray, name) for name in names)
