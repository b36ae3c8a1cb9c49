"""What the synthesized inputs of a replay were, in words, for the report. No torch here."""
from __future__ import annotations

SHOWN = {"nan": "NaN", "inf": "inf", "-inf": "-inf"}


def describe_spec(spec: dict, depth: int = 0) -> str:
    roles = set(spec.get("roles", []))
    if "device" in roles:
        return "the device"
    if "dtype" in roles:
        return "the floating dtype"
    if "string" in roles:
        return "words"
    if "size" in roles:
        return "a position count" if "positions" in roles else "a small size"
    if spec.get("elem") is not None and depth < 3:
        return f"a list of {describe_spec(spec['elem'], depth + 1)}"
    if spec.get("items") and depth < 3:
        keys = ", ".join(f"[{k!r}]: {describe_spec(v, depth + 1)}" for k, v in list(spec["items"].items())[:3])
        return f"a mapping ({keys})"
    if "count" in roles:
        return "a count (an int of 0..5)" if "numpy" in roles else "a count (an int64 of 0..5)"
    if "scalar" in roles:
        return "a float added whole"
    kind = "bool" if "bool" in roles else ("int64 index" if "index" in roles else ("int64" if "integer" in roles else "float"))
    dims = spec.get("dims", 1)
    specials = [v for v in spec.get("specials", []) if kind != "int64" or isinstance(v, int)]
    values = ["0", "1", "2"] + [SHOWN.get(str(v), str(v)) for v in specials]
    if "index" in roles:
        values = [f"0..{spec.get('index_range', 2) - 1}"]
    container = "NumPy arrays" if "numpy" in roles else "tensors"
    text = f"{dims}-D {kind} {container}" + ("" if kind == "bool" else f" of {', '.join(dict.fromkeys(values))}")
    attributes = [a for a in spec.get("attrs", {}) if a not in ("shape", "device", "dtype")]
    if attributes and depth < 3:
        text += " with " + ", ".join(f".{a}" for a in attributes[:3])
    return text


def describe_inputs(harness: dict) -> str:
    parts = [f"`{name}`: {describe_spec(spec)}" for name, spec in harness.get("inputs", {}).items() if name != "self"]
    return "synthetic: " + ("; ".join(parts) if parts else "none needed")
