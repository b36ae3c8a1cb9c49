"""Synthesized inputs for a replay, from the facts `usage.py` recorded (imports torch).

Values carry what the code counts: every tensor draws its elements from 0, 1, 2
and the values the code compares it with (NaN, +-inf, negatives, -100, the pad
id), so predicates fire. Tensors the code reduces along dim=1 are 2-D; indices are
int64 within the buffer; strings are words; sizes are small ints; devices are the
target device. An object used through attributes torch.Tensor does not have
(`param.main_grad`, `batch.input_ids`) is a tensor carrying them, or a holder
whose other attributes forward to a tensor.

In a `large:*` run the first element of every input is long (2L+1 values, filled
with one pattern), so a single count passes the dtype's limit.

An input marked `numpy` (numpy_inputs.py: the code hands it to NumPy, or the replay
is of a NumPy total) is made the same way and handed over as a NumPy array; a count
there is a Python int, as `len(shard)` is.
"""
from __future__ import annotations

import zlib

import torch

from .numpy_values import as_numpy

SIZE = 4
POSITIONS_SMALL = 64  # short context: positions exact in bf16, the angles are not
POSITIONS_LARGE = 8192
SEQUENCE = 8
NESTED_SEQUENCE = 3
SECOND_DIM = 4  # the small size too: `x.view(-1, y.shape[1])` works
WORDS = ("the", "cat", "sat", "on", "a", "mat", "and", "then", "slept")
SETTABLE_TENSOR_ATTRIBUTES = frozenset({"grad"})
SETTING_VALUE = 7  # usage.SETTING_VALUE


def _special(value):
    if value == "nan":
        return float("nan")
    if value == "inf":
        return float("inf")
    if value == "-inf":
        return float("-inf")
    return value


class Holder:
    """An object used through attributes and keys: the known ones hold what the
    code uses them as; any other attribute or key forwards to a tensor, so tensor
    methods work on it."""

    def __init__(self, attributes: dict, items: dict, default) -> None:
        object.__setattr__(self, "_Holder__state", (attributes, items, default))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        attributes, _, default = object.__getattribute__(self, "_Holder__state")
        if name in attributes:
            return attributes[name]
        return getattr(default, name)

    def __getitem__(self, key):
        _, items, default = object.__getattribute__(self, "_Holder__state")
        return items.get(str(key), default) if not isinstance(key, int) or str(key) in items else default[key]

    def __setitem__(self, key, value):
        object.__getattribute__(self, "_Holder__state")[1][str(key)] = value

    def __len__(self):
        return len(object.__getattribute__(self, "_Holder__state")[2])

    def __iter__(self):
        return iter(object.__getattribute__(self, "_Holder__state")[2])

    def keys(self):
        return object.__getattribute__(self, "_Holder__state")[1].keys()

    def values(self):
        return object.__getattribute__(self, "_Holder__state")[1].values()

    def items(self):
        return object.__getattribute__(self, "_Holder__state")[1].items()

    def get(self, key, default=None):
        return object.__getattribute__(self, "_Holder__state")[1].get(str(key), default)


class Synthesizer:
    def __init__(self, specs: dict, opaque: list, device: str, seed: int, run: str, limit: int | None, float_dtype=None) -> None:
        self.specs = specs
        # floating data: float32, or the dtype the site is replayed in (the model's
        # floating dtype as bfloat16); 0, 1, 2, NaN, +-inf and -100 are exact in both
        self.float_dtype = float_dtype or torch.float32
        self.opaque_specs = opaque
        self.device = device
        self.seed = seed
        self.run = run
        self.pattern = run.split(":", 1)[1] if ":" in run else ""
        self.long_positions = run.startswith("large")
        self.large = run.startswith("large") and self.pattern != "positions"
        limit = limit or 2**24
        self.big = 2 * min(limit, 2**25) + 1
        self.call_index = 0
        self._counters: dict[str, int] = {}

    # -- entry points -----------------------------------------------------------------
    def input(self, name: str):
        count = self._counters.get(name, 0)
        self._counters[name] = count + 1
        return self.make(self.specs.get(name, {"roles": []}), f"{name}#{count}", 0)

    def opaque(self, number: int):
        spec = self.opaque_specs[number] if number < len(self.opaque_specs) else {"roles": []}
        return self.input_like(spec, f"<opaque {number}>")

    def input_like(self, spec: dict, name: str):
        count = self._counters.get(name, 0)
        self._counters[name] = count + 1
        return self.make(spec, f"{name}#{count}", 0)

    def attribute_of_self(self, name: str):
        spec = self.specs.get("self", {})
        attributes = {**spec.get("attrs", {}), **spec.get("called_attrs", {})}
        return self.make(attributes.get(name, {"roles": []}), f"self.{name}", 0)

    # -- making values ------------------------------------------------------------------
    def make(self, spec: dict, key: str, index: int, depth: int = 0):
        value = self._make(spec, key, index, depth)
        if "numpy" in spec.get("roles", []) and isinstance(value, torch.Tensor):
            return as_numpy(value)
        return value

    def _make(self, spec: dict, key: str, index: int, depth: int):
        roles = set(spec.get("roles", []))
        if "device" in roles:
            return torch.device(self.device)
        if "dtype" in roles:
            return self.float_dtype  # float32, or the dtype the site is replayed in
        if "string" in roles:
            return self._string(key, index)
        if "size" in roles:
            if "positions" in roles:
                return POSITIONS_LARGE if self.long_positions else POSITIONS_SMALL
            return SIZE
        if "setting" in roles:
            return SETTING_VALUE
        if "frequencies" in roles:
            # rotary inverse frequencies, as RoPE makes them (head dim 16)
            return (1.0 / (10000 ** (torch.arange(0, 16, 2, dtype=torch.float32) / 16))).to(self.device)
        if "count" in roles and "numpy" in roles:
            return self._random(key, index, 1, 0, 6)[0]
        if "count" in roles:
            return torch.tensor(self._random(key, index, 1, 0, 6)[0], dtype=torch.int64, device=self.device)
        if "mapping" in roles or spec.get("items"):
            return self._mapping(spec, key, index, depth)
        if spec.get("elem") is not None:
            length = SEQUENCE if depth == 0 else NESTED_SEQUENCE
            return [self.make(spec["elem"], f"{key}[{i}]", i, depth + 1) for i in range(length)]
        # an array has every attribute the code reads on it (numpy_inputs): no holder
        holder = self._holder(spec, key, index, depth) if "numpy" not in roles else None
        if holder is not None:
            return holder
        if "scalar" in roles:
            return torch.ones((), dtype=self.float_dtype, device=self.device)  # of unknown kind, added whole: a float
        if "number" in roles and not spec.get("dims"):
            pool = [0, 1, 2] + [_special(v) for v in spec.get("specials", [])]
            return torch.tensor(float(pool[self._random(key, index, 1, 0, len(pool))[0]]), dtype=self.float_dtype, device=self.device)
        return self.tensor(spec, key, index)

    def _mapping(self, spec: dict, key: str, index: int, depth: int):
        items = spec.get("items", {})
        if "*" in items:  # `for k, v in d.items()`
            return {f"k{i}": self.make(items["*"], f"{key}[k{i}]", i, depth + 1) for i in range(NESTED_SEQUENCE)}
        if "tuple" in spec.get("roles", []):
            return tuple(self.make(items.get(str(i), {"roles": []}), f"{key}[{i}]", index, depth + 1) for i in range(max(2, len(items))))
        made = {k: self.make(v, f"{key}[{k}]", index, depth + 1) for k, v in items.items()}
        return Holder({}, made, self.tensor({"roles": []}, f"{key}[*]", index))

    def _holder(self, spec: dict, key: str, index: int, depth: int):
        """An input read through attributes torch.Tensor lacks: a tensor that carries
        them (when the code also uses it as a tensor), else a holder."""
        attributes = spec.get("attrs", {})
        methods = spec.get("called_attrs", {})
        foreign = {
            a: s for a, s in attributes.items()
            # read, not called, where a tensor has a method of that name (`config.dim`)
            if not hasattr(torch.Tensor, a) or a in SETTABLE_TENSOR_ATTRIBUTES or (callable(getattr(torch.Tensor, a, None)) and a not in methods)
        }  # fmt: skip
        foreign_methods = {m: s for m, s in methods.items() if not hasattr(torch.Tensor, m)}
        if spec.get("result") is not None:
            result = self.make(spec["result"], f"{key}()", index, depth + 1)
            return lambda *args, **kwargs: result
        if not foreign and not foreign_methods:
            return None
        tensor_use = set(spec.get("roles", [])) & {"index", "bool", "scalar"} or spec.get("specials") or spec.get("dims") or any(
            hasattr(torch.Tensor, a) and a not in SETTABLE_TENSOR_ATTRIBUTES and a not in foreign for a in list(attributes) + list(methods)
        )
        made = {a: self.make(s, f"{key}.{a}", index, depth + 1) for a, s in foreign.items()}
        for name, result_spec in foreign_methods.items():
            result = self.make(result_spec, f"{key}.{name}()", index, depth + 1)
            made[name] = (lambda value: (lambda *args, **kwargs: value))(result)
        base = self.tensor(spec, key, index)
        if "grad" in made:
            grad = made.pop("grad")
            base.grad = grad.to(base.dtype).reshape(base.shape) if isinstance(grad, torch.Tensor) and grad.numel() == base.numel() else self.tensor({"roles": []}, f"{key}.grad", index).reshape(base.shape).to(base.dtype)
        if tensor_use or not made:
            for name, value in made.items():
                setattr(base, name, value)
            return base
        return Holder(made, {}, base)

    def length(self, key: str, index: int) -> int:
        if self.large and index == 0 and self.call_index == 0:
            return self.big
        # multiples of the small size, so that `x.view(-1, n)` works; varied, so counts are
        return SIZE * (1 + (index * 3 + self.call_index * 5 + self.seed) % 5)

    def tensor(self, spec: dict, key: str, index: int) -> torch.Tensor:
        roles = set(spec.get("roles", []))
        dims = int(spec.get("dims", 1))
        length = spec.get("length") or self.length(key, index)
        # rows first: a 2-D input has as many rows as a 1-D one has elements, so the
        # two compare (`logits.argmax(dim=1) == y`)
        shape = (length,) if dims == 1 else (length, SECOND_DIM) + (2,) * (dims - 2)
        if spec.get("long_dim") is not None and -len(shape) <= spec["long_dim"] < len(shape):
            # a dimension the code takes as a length of positions
            shape = list(shape)
            shape[spec["long_dim"]] = POSITIONS_LARGE if self.long_positions else POSITIONS_SMALL
            shape = tuple(shape)
        numel = 1
        for size in shape:
            numel *= size
        if "bool" in roles:
            dtype = torch.bool
        elif "index" in roles or "integer" in roles:
            dtype = torch.int64
        else:
            dtype = torch.float32
        if self.large and index == 0 and self.call_index == 0:
            values = self._fill(spec, key, numel, dtype)
            values = values.to(self.float_dtype) if values.is_floating_point() else values
        elif dtype is torch.bool:
            values = torch.tensor(self._random(key, index, numel, 0, 2), dtype=torch.int64) > 0
        elif "index" in roles:
            bound = max(1, int(spec.get("index_range") or 2))
            values = torch.tensor(self._random(key, index, numel, 0, bound), dtype=torch.int64)
        elif "integer" in roles:
            pool = [0, 1, 2] + [v for v in spec.get("specials", []) if isinstance(v, int)]
            picks = self._random(key, index, numel, 0, len(pool))
            values = torch.tensor([pool[p] for p in picks], dtype=torch.int64)
        else:
            pool = [0, 1, 2] + [_special(v) for v in spec.get("specials", [])]
            picks = self._random(key, index, numel, 0, len(pool))
            values = torch.tensor([float(pool[p]) for p in picks], dtype=self.float_dtype)
        return values.reshape(shape).to(self.device)

    def _fill(self, spec: dict, key: str, numel: int, dtype) -> torch.Tensor:
        """One value for the whole of a large input: `uniform` (0: equal to each
        other, `== 0`), `distinct` (1 or 2 by name: `!= ...`, `> 0`), `special` (the
        first value the code compares with: NaN, -100, ...)."""
        if dtype is torch.bool:
            return torch.ones(numel, dtype=torch.bool)
        if dtype is torch.int64 and "integer" in spec.get("roles", []) and "index" not in spec.get("roles", []):
            whole = [v for v in spec.get("specials", []) if isinstance(v, int)]
            value = 0
            if self.pattern == "distinct":
                value = 1 + zlib.crc32(key.split("#")[0].encode()) % 2
            elif self.pattern == "special" and whole:
                value = sorted(whole)[0]
            return torch.full((numel,), value, dtype=torch.int64)
        if dtype is torch.int64:
            return torch.zeros(numel, dtype=torch.int64)
        value = 0.0
        if self.pattern == "distinct":
            value = 1.0 + zlib.crc32(key.split("#")[0].encode()) % 2
        elif self.pattern == "special" and spec.get("specials"):
            value = float(_special(sorted(spec["specials"], key=repr)[0]))
        elif self.pattern == "special":
            value = float("nan")
        return torch.full((numel,), value, dtype=torch.float32)

    def _random(self, key: str, index: int, count: int, low: int, high: int) -> list[int]:
        generator = torch.Generator().manual_seed((self.seed * 7919 + zlib.crc32(key.encode()) * 31 + index * 131 + self.call_index * 977) % (2**63))
        return torch.randint(low, high, (count,), generator=generator).tolist()

    def _string(self, key: str, index: int) -> str:
        count = self.length(key, index) if not self.large else 6
        picks = self._random(key, index, count, 0, len(WORDS))
        return " ".join(WORDS[p] for p in picks)
