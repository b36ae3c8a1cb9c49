"""NumPy values in a replay's child process (imports torch, and NumPy when installed).

A total kept in NumPy (`np.int32(0)`, `np.zeros(k, dtype=np.int32)`) is replayed as
NumPy runs it. Its exact shadow is a NumPy int64 array of the same shape, starting
at the offset plus what the creation put there (`np.ones`), so the statements
mirrored on it run in NumPy too (a torch shadow next to NumPy code would change the
promotions being watched: `np.int32(5) + torch.tensor(3)` is a tensor).
The recorder compares through torch (`as_torch`), so one set of rules judges both.
"""
from __future__ import annotations

import torch

try:
    import numpy as np
except ImportError:  # torch without NumPy: no NumPy value can turn up
    np = None

# the largest whole number each dtype holds exactly (as hooks.LIMITS, by NumPy's names)
LIMITS = {
    "float16": 2**11, "float32": 2**24, "float64": 2**53,
    "int32": 2**31 - 1, "int16": 2**15 - 1, "int8": 2**7 - 1, "uint8": 2**8 - 1,
}  # fmt: skip


def is_numpy(value) -> bool:
    return np is not None and isinstance(value, (np.ndarray, np.generic))


def dtype_name(value) -> str:
    return str(value.dtype)


def limit_of(value) -> int | None:
    return LIMITS.get(dtype_name(value))


def is_integer(value) -> bool:
    return value.dtype.kind in "iub"


def as_torch(value):
    """A NumPy value as a CPU tensor, for comparing; anything else as it is."""
    if not is_numpy(value):
        return value
    try:
        return torch.as_tensor(np.array(value))  # a copy: writable, and 0-dim for a scalar
    except (TypeError, RuntimeError):
        return value  # strings, objects: not numbers to compare


def as_numpy(tensor: torch.Tensor):
    """A synthesized tensor as the NumPy array the code hands to NumPy (NumPy has
    no bfloat16: float32 holds the same values)."""
    tensor = tensor.detach().cpu()
    if tensor.dtype is torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def initial_exact(value):
    """What a NumPy accumulator holds at its creation (`np.ones(k)`, `np.int32(5)`),
    exactly: an int64 array when whole, float64 otherwise (0-dim for a scalar)."""
    array = np.asarray(value)
    if array.dtype.kind == "f" and bool(np.isfinite(array).all()) and np.array_equal(np.round(array), array):
        return array.astype(np.int64)
    return array.astype(np.float64) if array.dtype.kind == "f" else array.astype(np.int64)


def largest(initial) -> int:
    """The largest finite initial element, rounded up (0 for none), as starts.largest."""
    finite = initial[np.isfinite(initial)] if initial.dtype.kind == "f" else initial.ravel()
    return int(np.ceil(finite.max())) if finite.size else 0


def started(value, offset: int, initial):
    """The accumulator moved to `offset` (in place for an array; a NumPy scalar is
    immutable, so a new one of the same dtype), and its exact shadow: the offset plus
    the initial value, element by element."""
    if offset:
        if isinstance(value, np.ndarray):
            value += offset
        else:
            value = value + offset  # NumPy keeps the scalar's dtype for a Python int
    return value, np.asarray(initial + offset)  # 0-dim for a scalar, as the accumulator's shape


def exact(value):
    """A NumPy count as exact numbers: int64 when whole, float64 otherwise; a
    scalar becomes a Python number (added to the shadow as NumPy adds an int)."""
    array = np.asarray(value)
    if array.dtype.kind == "f":
        rounded = np.round(array)
        array = rounded.astype(np.int64) if np.array_equal(rounded, array) else array.astype(np.float64)
    elif array.dtype.kind in "iub":
        array = array.astype(np.int64)
    return array if isinstance(value, np.ndarray) else array.item()


class Wide(np.ndarray):
    """The shadow while a statement that changes the accumulator is mirrored on it:
    float64, and deaf to `astype` (`acc = acc.astype(np.int32)` must not wrap the
    exact total; the accumulator itself wraps, and the comparison shows it)."""

    def astype(self, dtype, *args, **kwargs):
        return self


def wide(value):
    return np.array(value, dtype=np.float64).view(Wide)


def settle(value) -> tuple[object, bool]:
    """The shadow after a mirrored statement, and whether it is approximate: int64
    again when it holds whole numbers, else float64."""
    array = np.asarray(value).view(np.ndarray)
    if array.dtype.kind == "f":
        rounded = np.round(array)
        if np.array_equal(rounded, array) and bool((np.abs(array) < 2**53).all()):
            return rounded.astype(np.int64), False
        return array.astype(np.float64), True
    return array.astype(np.int64), False
