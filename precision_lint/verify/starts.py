"""Where an accumulator starts in a replay or a stress pass (child process; imports torch).

Starting an accumulator at L-k and adding the same counts gives bit-identical
results to a long run that reached L-k, so a run is started at an *offset* near the
dtype's limit. What the creation itself put there (`torch.ones(1)`, `torch.full((k,),
5)`, `torch.tensor([3, 0])`, `np.ones(k)`) is part of the total: the exact shadow
starts at the offset plus that initial value, element by element. The offset is
lowered by the largest initial element, so that element starts where a zero start
would: exactly representable, and an int32 `5` does not wrap before the first add.
(Past the limit, in the `high` run, a smaller element may fall between two floats;
it is rounded there, and the comparison shows it.)
"""
from __future__ import annotations

import math

import torch

# the one start of a real run's stress pass (`--pytest`, `--call`): integers just
# below their limit (`below`: int32 has no `high`, it wraps from just below 2^31),
# floats where the spacing is 8 (`high`)
STRESS = "stress"


def start_offset(run: str, limit: int, integer: bool, scale: float = 1.0, top: int = 0) -> int:
    """Where a run starts the accumulator: 0, just below the limit (`below`: int32
    wraps a few adds later), or where the float spacing is 8 and then 16 (`high`);
    less `top`, the largest initial element (never raised: a negative one stays put)."""
    if run == STRESS:
        run = "below" if integer else "high"
    if run == "below":
        # int32: 2 below, so even adds of 1 (a per-class count) wrap within the replay's calls
        base = limit - 2 if integer else limit - 8
    elif run == "high" and not integer:
        base = int(8 * max(1.0, scale)) * limit - 64
    else:
        return 0
    return base - max(0, top)


def initial_exact(value):
    """What a torch accumulator (or a Python number) holds at its creation, exactly:
    int64 per element when whole, float64 otherwise; a Python number as it is."""
    if isinstance(value, torch.Tensor):
        # copies: the accumulator itself is then moved to the offset in place
        held = value.detach()
        if not held.is_floating_point():
            return held.to(torch.int64, copy=True)
        wide = held.to(torch.float64, copy=True)
        finite = bool(torch.isfinite(wide).all())
        return wide.to(torch.int64) if finite and bool(torch.equal(wide.round(), wide)) else wide
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def largest(initial) -> int:
    """The largest finite initial element, rounded up to a whole number (0 for none)."""
    if isinstance(initial, torch.Tensor):
        values = initial.double().flatten()
        values = values[torch.isfinite(values)]
        top = float(values.max().item()) if values.numel() else 0.0
    else:
        top = float(initial) if isinstance(initial, (int, float)) else 0.0
    return math.ceil(top) if math.isfinite(top) else 0


def torch_shadow(initial, offset: int, device) -> torch.Tensor:
    """The exact shadow: the offset plus the initial value (of the accumulator's shape)."""
    if isinstance(initial, torch.Tensor):
        return initial.to(device) + offset
    dtype = torch.float64 if isinstance(initial, float) else torch.int64
    return torch.tensor(initial + offset, dtype=dtype, device=device)
