"""The `__h` object instrumented code calls, in a child process (imports torch).

`Recorder` keeps, per site, the exact shadow of an accumulator (an int64 tensor
of the same shape, updated by every add with the count converted exactly) and the
trajectory: after every add or change, the exact total next to the accumulator's.
It also starts an accumulator at an offset near its dtype's limit: starting at L-k
and adding the same counts gives bit-identical results to a long run that reached
L-k (float32, float16, bfloat16 and float64 alike), so a few adds there show what
millions of steps would; the shadow starts at the offset plus what the creation
put there (`torch.ones`: starts.py). Value sites record a value next to its exact
version.
A total kept in NumPy gets a NumPy shadow instead (`numpy_values`).

`ReplayHooks` adds what a replay needs on top: synthesized inputs, the scenario's
branch arms, bounded loops, the target device for every CUDA spelling, and the
project's autocast around the calls where the site runs under it.
"""
from __future__ import annotations

import contextlib
import itertools
import weakref

import torch

from . import numpy_values
from .starts import initial_exact, largest, start_offset, torch_shadow
from .synth import Synthesizer

TRACE_POINTS = 240
N_CALLS = 8  # calls of a method that adds, after the instance is built
LOOP_LIMIT = 16  # iterations of any loop in a replay
LIMITS = {
    torch.float16: 2**11, torch.bfloat16: 2**8, torch.float32: 2**24, torch.float64: 2**53,
    torch.int32: 2**31 - 1, torch.int16: 2**15 - 1, torch.int8: 2**7 - 1, torch.uint8: 2**8 - 1,
}  # fmt: skip
FLOAT_HINTS = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64}


def limit_of(dtype) -> int | None:
    return LIMITS.get(dtype)


def as_exact_int(value) -> int:
    """An exact Python int for a count or an accumulator (summed over its elements)."""
    if isinstance(value, torch.Tensor):
        value = value.detach()
        if value.is_floating_point():
            return int(value.double().sum().round().item()) if value.numel() < 2**20 else int(value.double().sum().item())
        return int(value.to(torch.int64).sum().item())
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return int(round(value)) if value == value and abs(value) != float("inf") else 0
    return int(value)


class Wide(torch.Tensor):
    """The shadow while a statement that changes the accumulator is mirrored on it:
    float64, and deaf to conversions (`acc = acc.float()` must not round the exact
    total; the accumulator itself is rounded, and the comparison shows it)."""

    IGNORED = frozenset({"float", "half", "bfloat16", "int", "long", "short", "type_as", "type", "to", "double"})

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in cls.IGNORED and args and isinstance(args[0], Wide):
            return args[0]
        return super().__torch_function__(func, types, args, kwargs or {})


class Box:
    __slots__ = ("v", "approximate")

    def __init__(self, value) -> None:
        self.v = value
        self.approximate = False


class Recorder:
    def __init__(self, device: str, run: str = "zero", offset: int | None = None, dtype_hint: str | None = None, scale: float = 1.0) -> None:
        self.device_name = device
        self.run_name = run
        self.offset = offset  # None: decided at the first start, from the dtype there
        self.dtype_hint = FLOAT_HINTS.get(dtype_hint or "", None)
        self.scale = scale
        self.limit: int | None = None
        self.start_dtype: str | None = None
        self.top = 0  # the largest element the creation made: the offset is lowered by it
        self.arrays = "torch"  # "numpy" once a NumPy accumulator is started: its shadow is NumPy
        self._boxes: dict = {}
        self._weak: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self.points: list = []
        self.driven = False
        self.max_seen = 0
        self.lost = False
        self.floating_at_add = False
        self.adds = 0
        self.nonzero_adds = 0
        self.values: list = []
        self.angles: list = []
        self._exact_values: dict = {}
        self.approximate_at: int | None = None
        self.max_error = 0
        # the dtype a floating accumulator runs in when it is not the one written
        # (the model's floating dtype is replayed as bfloat16): findings.run_dtype
        self.run_dtype = None

    # -- accumulators -------------------------------------------------------------------
    def start(self, site: int, value, owner):
        if numpy_values.is_numpy(value):
            self.arrays = "numpy"
            initial = numpy_values.initial_exact(value)
            self._first_start(numpy_values.dtype_name(value), numpy_values.limit_of(value), numpy_values.is_integer(value), numpy_values.largest(initial))
            value, shadow = numpy_values.started(value, self.offset, initial)
            self._set_box(site, owner, Box(shadow))
            return value
        if self.run_dtype is not None and isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != self.run_dtype:
            value = value.to(self.run_dtype)
        elif self.run_dtype is not None and isinstance(value, float):
            # a Python `0.0` becomes a tensor of the default dtype at its first add:
            # of the one the project sets
            value = torch.tensor(value, dtype=self.run_dtype, device=self.device_name)
        dtype = value.dtype if isinstance(value, torch.Tensor) else self.dtype_hint or torch.get_default_dtype()
        if isinstance(value, int) and not isinstance(value, bool) and not isinstance(value, torch.Tensor):
            dtype = torch.int64  # a Python int start (the fixed `total = 0`)
        integer = not (isinstance(dtype, torch.dtype) and dtype.is_floating_point)
        # what the creation made (`torch.ones`, `torch.full((k,), 5)`) counts too: the
        # shadow starts at the offset plus it (starts.py)
        initial = initial_exact(value)
        self._first_start(str(dtype).replace("torch.", ""), limit_of(dtype), integer, largest(initial))
        offset = self.offset
        if isinstance(value, torch.Tensor):
            if offset:
                value.add_(offset)
            shadow = torch_shadow(initial, offset, value.device)
        else:
            value = value + offset
            shadow = torch_shadow(initial, offset, self.device_name)
        self._set_box(site, owner, Box(shadow))
        return value

    def _first_start(self, dtype: str, limit: int | None, integer: bool, top: int = 0) -> None:
        """The dtype and the start offset come from the first start (the original's;
        the fixed code is given the same offset). `top`: the largest initial element."""
        if self.start_dtype is None:
            self.start_dtype = dtype
            self.top = max(0, top)
        if self.offset is None:
            self.limit = limit
            self.offset = start_offset(self.run_name, limit, integer, self.scale, top) if limit else 0

    def _set_box(self, site: int, owner, box: Box) -> None:
        if owner is None:
            self._boxes[(site, None)] = box
            return
        try:
            self._weak.setdefault(owner, {})[site] = box
        except TypeError:  # not weakly referable (a dict): by identity
            self._boxes[(site, id(owner))] = box

    def box(self, site: int, owner) -> Box:
        if owner is None:
            return self._boxes[(site, None)]
        try:
            return self._weak[owner][site]
        except (TypeError, KeyError):
            return self._boxes[(site, id(owner))]

    def exact(self, value):
        """A count as an exact integer (int64 tensor or int) for the shadow; of the
        shadow's library (NumPy for a NumPy total), so the mirrored add runs as written."""
        if numpy_values.is_numpy(value):
            counted = numpy_values.exact(value)
            if self.arrays == "torch" and numpy_values.is_numpy(counted):
                return torch.as_tensor(counted, device=self.device_name)
            return counted
        if isinstance(value, torch.Tensor) and self.arrays == "numpy":
            return numpy_values.exact(numpy_values.as_numpy(value))
        if isinstance(value, torch.Tensor):
            value = value.detach()
            if value.is_floating_point():
                rounded = value.round()
                if bool(torch.equal(rounded, value)):
                    return rounded.to(torch.int64)
                return value.double()
            return value.to(torch.int64)
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float):
            return int(value) if value.is_integer() else value
        return value

    def f64(self, value):
        if numpy_values.is_numpy(value):
            return numpy_values.wide(value)
        if isinstance(value, torch.Tensor):
            return value.double().as_subclass(Wide)
        return value

    def settle(self, site: int, value, line: int):
        """The shadow after a mirrored statement: exact integers again when it holds
        whole numbers, else float64 (and the comparison says so)."""
        if numpy_values.is_numpy(value) or (self.arrays == "numpy" and not isinstance(value, torch.Tensor)):
            settled, approximate = numpy_values.settle(value)
            if approximate and self.approximate_at is None:
                self.approximate_at = line
            return settled
        if not isinstance(value, torch.Tensor):
            # a Python number (`acc = acc.item()`): never through the default float32
            dtype = torch.float64 if isinstance(value, float) else torch.int64
            value = torch.tensor(value, dtype=dtype, device=self.device_name)
        value = value.as_subclass(torch.Tensor)
        if value.is_floating_point():
            rounded = value.round()
            if bool(torch.equal(rounded, value)) and bool((value.abs() < 2**53).all()):
                return rounded.to(torch.int64)
            if self.approximate_at is None:
                self.approximate_at = line
            return value.double()
        return value.to(torch.int64)

    def trace(self, site: int, value, owner, line: int, kind: str) -> None:
        box = self.box(site, owner)
        # NumPy values are compared as tensors: the same rules judge both
        shadow = numpy_values.as_torch(box.v)
        exact_total = as_exact_int(shadow)
        actual = numpy_values.as_torch(value)
        floating = (isinstance(actual, torch.Tensor) and actual.is_floating_point()) or isinstance(actual, float)
        equal = _equal(actual, shadow)
        if not equal:
            self.lost = True
        slot = as_exact_int(shadow.abs().max()) if isinstance(shadow, torch.Tensor) and shadow.numel() else abs(exact_total)
        if kind == "add":
            self.adds += 1
            previous = self.points[-1][0] if self.points else None
            if previous is None or previous != exact_total:
                self.nonzero_adds += 1
                if self.limit is not None and slot > self.limit:
                    self.driven = True
            if floating:
                self.floating_at_add = True
        self.max_seen = max(self.max_seen, slot)
        if not equal and not isinstance(actual, str):
            self.max_error = max(self.max_error, abs(as_exact_int(actual) - exact_total))
        self.points.append((exact_total, as_exact_int(actual) if not isinstance(actual, str) else 0, kind, line, equal))

    # -- value sites -----------------------------------------------------------------------
    def value(self, site: int, value, exact):
        self._exact_values[site] = exact
        record = {"dtype": str(value.dtype).replace("torch.", "") if isinstance(value, torch.Tensor) else type(value).__name__}
        if isinstance(value, torch.Tensor) and isinstance(exact, torch.Tensor):
            ours, reference = value.detach().double(), exact.detach().double()
            same_shape = ours.shape == reference.shape
            record["equal"] = bool(same_shape and torch.equal(ours, reference))
            record["max_error"] = float((ours - reference).abs().max().item()) if same_shape and ours.numel() else (0.0 if same_shape else float("inf"))
            record["max_exact"] = float(reference.abs().max().item()) if reference.numel() else 0.0
            record["value"] = as_exact_int(value) if value.numel() == 1 or not value.is_floating_point() else float(ours.sum().item())
            record["exact"] = as_exact_int(exact) if exact.numel() == 1 else float(reference.sum().item())
            record["numel"] = int(reference.numel())
            record["limit"] = limit_of(value.dtype)
        else:
            record["equal"] = value == exact
        self.values.append(record)
        return value

    def exact_of(self, site: int):
        exact = self._exact_values.get(site)
        return exact.double() if isinstance(exact, torch.Tensor) else exact

    def angle(self, site: int, value, exact):
        if isinstance(value, torch.Tensor) and isinstance(exact, torch.Tensor) and value.shape == exact.shape:
            error = (value.detach().double() - exact.detach().double()).abs()
            self.angles.append(
                {
                    "dtype": str(value.dtype).replace("torch.", ""),
                    "max_error": float(error.max().item()) if error.numel() else 0.0,
                    "max_angle": float(exact.abs().max().item()) if exact.numel() else 0.0,
                    "positions": int(exact.shape[0]) if exact.dim() else 1,
                }
            )
        return value

    def summary(self) -> dict:
        return {
            "points": _thin(self.points),
            "driven": self.driven,
            "max_seen": self.max_seen,
            "lost": self.lost,
            "max_error": self.max_error,
            "floating_at_add": self.floating_at_add,
            "adds": self.adds,
            "nonzero_adds": self.nonzero_adds,
            "limit": self.limit,
            "offset": self.offset,
            # where the largest element started: the offset plus what the creation made
            "start": (self.offset or 0) + self.top,
            "start_dtype": self.start_dtype,
            "device": self.device_name,
            "values": self.values[-40:],
            "angles": self.angles[-10:],
            "approximate_at": self.approximate_at,
            "final": self.points[-1][:2] if self.points else None,
            "final_equal": self.points[-1][4] if self.points else None,
        }


class _Null:
    """`torch.cuda.*` on a CPU target: does nothing, as a call, a context manager or a flag."""

    def __call__(self, *args, **kwargs):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __bool__(self):
        return False

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


_SELF_STATE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class ReplaySelf:
    """`self` in a replayed method: attributes the code sets behave as set; one it
    reads without setting is synthesized from how the class uses it. Its state lives
    outside it, where replay code cannot reach."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        hooks = _SELF_STATE[self]
        value = hooks.synth.attribute_of_self(name)
        object.__setattr__(self, name, value)
        return value


class ReplayHooks(Recorder):
    def __init__(self, job: dict, scenario: dict, run: str, variant: str, device: str, offset: int | None, seed: int) -> None:
        super().__init__(device, run if not run.startswith("large") else "zero", offset, job.get("dtype"), job.get("scale", 1.0))
        self.job = job
        self.scenario = scenario
        self.variant = variant
        self.run_dtype = FLOAT_HINTS.get(job.get("run_dtype") or "")
        self.synth = Synthesizer(job["inputs"], job.get("opaque", []), device, seed, run, job.get("limit"), self.run_dtype)
        self._self = None
        self._loops: dict[int, int] = {}
        self.post_error: dict | None = None

    def run(self, inits, calls, posts, self_object) -> None:
        arguments = (self_object,) if self_object is not None else ()
        for function in inits:
            function(*arguments)
        with self._autocast():
            for number in range(N_CALLS if self.job.get("calls") else 1):
                self.synth.call_index = number
                for function in calls:
                    function(*arguments)
        for function in posts:
            try:
                function(*arguments)
            except Exception as error:  # noqa: BLE001 - reported beside the verdict
                import sys

                self.post_error = {"error": f"{type(error).__name__}: {error}", "line": _replay_line(sys.exc_info()[2])}

    def device(self):
        return torch.device(self.device_name)

    def _autocast(self):
        """The autocast the project runs the site's calls under (under_autocast.py),
        on the replay's device; the instance is built outside it, as a caller builds
        the model before its autocast region. Float64 (the exact versions) is never
        cast by autocast."""
        dtype = self.job.get("autocast")
        if not dtype:
            return contextlib.nullcontext()
        return torch.autocast(device_type=torch.device(self.device_name).type, dtype=getattr(torch, dtype))

    def failed(self, line: int, error: Exception) -> None:
        """A statement that only reads the accumulator afterwards raised."""
        if self.post_error is None:
            self.post_error = {"error": f"{type(error).__name__}: {error}"[:300], "source_line": line}

    def self_object(self):
        if self._self is None:
            self._self = ReplaySelf()
            _SELF_STATE[self._self] = self
        return self._self

    def input(self, name: str):
        return self.synth.input(name)

    def opaque(self, number: int):
        return self.synth.opaque(number)

    def arm(self, branch: int, arm: int) -> bool:
        return self.scenario["arms"].get(str(branch)) == arm

    def test(self, branch: int, arm: int, condition) -> bool:
        """An `if` that does not touch the accumulator: as the code says, or the
        default arm when synthetic inputs cannot answer it (a tensor of many values)."""
        try:
            return bool(condition())
        except Exception:  # noqa: BLE001 - the default arm is taken instead
            return self.scenario["arms"].get(str(branch)) == arm

    def loop(self, number: int) -> bool:
        count = self._loops.get(number, 0)
        if count >= LOOP_LIMIT:
            self._loops[number] = 0
            return False
        self._loops[number] = count + 1
        return True

    def bounded(self, iterable):
        return itertools.islice(iterable, LOOP_LIMIT)

    def legacy(self, name: str):
        dtype = {
            "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
            "BFloat16Tensor": torch.bfloat16, "ByteTensor": torch.uint8, "CharTensor": torch.int8,
            "ShortTensor": torch.int16, "IntTensor": torch.int32, "LongTensor": torch.int64, "BoolTensor": torch.bool,
        }[name]  # fmt: skip
        device = self.device_name

        def make(*args):
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                return torch.tensor(args[0], dtype=dtype, device=device)
            if len(args) == 1 and isinstance(args[0], torch.Tensor):
                return args[0].to(device=device, dtype=dtype)
            return torch.zeros(*args, dtype=dtype, device=device)  # sizes; zeros, not garbage

        return make

    def cuda(self, name: str):
        if self.device_name.startswith("cuda"):
            value = torch.cuda
            for part in name.split("."):
                value = getattr(value, part)
            return value
        if name == "is_available":
            return lambda: False
        if name == "device_count":
            return lambda: 0
        return _Null()

    def module_cast(self, value):
        cast = self.scenario.get("cast")
        if cast is None and not self.job.get("module_cast") and self.run_dtype is not None:
            cast = str(self.run_dtype).replace("torch.", "")  # the model's floating dtype, as replayed
        if cast and isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.to(getattr(torch, cast))
        return value


def _equal(actual, shadow) -> bool:
    if not isinstance(shadow, torch.Tensor):
        return as_exact_int(actual) == shadow
    if isinstance(actual, torch.Tensor):
        actual = actual.detach()
        if actual.shape != shadow.shape:
            try:
                actual = actual.expand(shadow.shape) if actual.numel() == 1 else actual.reshape(shadow.shape)
            except RuntimeError:
                return as_exact_int(actual) == as_exact_int(shadow)
        if shadow.is_floating_point() or actual.is_floating_point():
            if actual.is_floating_point() and not shadow.is_floating_point():
                whole = actual.double().round()
                if not bool(torch.equal(whole, actual.double())) or not bool(torch.isfinite(actual).all()):
                    return False
                return bool(torch.equal(actual.to(torch.int64).to(shadow.device), shadow))
            return bool(torch.equal(actual.double().to(shadow.device), shadow.double()))
        return bool(torch.equal(actual.to(torch.int64).to(shadow.device), shadow))
    try:
        if isinstance(actual, float) and not actual.is_integer():
            return False
        if shadow.is_floating_point():
            return float(actual) == float(shadow.sum().item())
        return int(actual) == as_exact_int(shadow)
    except (TypeError, ValueError, OverflowError):
        return False


def _thin(points: list) -> list:
    if len(points) <= TRACE_POINTS:
        return points
    step = len(points) / TRACE_POINTS
    kept = [points[int(i * step)] for i in range(TRACE_POINTS)]
    kept[-1] = points[-1]
    return kept


def _replay_line(trace) -> int | None:
    line = None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename.startswith("<replay"):
            line = trace.tb_lineno
        trace = trace.tb_next
    return line
