"""What the interpreter learns about each accumulator candidate: what is added to
it and how else it is used. Rules read these facts; they never walk code again."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterable

import libcst as cst

from .dtypes import BFLOAT16, FLOAT16, FLOAT32, RUNTIME_FLOAT, DType

HALF_DTYPES = (BFLOAT16, FLOAT16, RUNTIME_FLOAT)
from .values import Creation


class AddendKind(Enum):
    COUNT = "count"  # len(), numel(), mask.sum(), count_nonzero(), sums of those
    INTEGRAL = "integral"  # other whole numbers: a literal 1, an integer tensor
    FLOATING = "floating"  # a loss, a norm, a Python float
    UNKNOWN = "unknown"


class Effect(Enum):
    """What a use means for changing the accumulator to int64 (worst last)."""

    SAFE = 0  # valid on int64 and exact
    ESCAPES = 1  # goes where we cannot see: the change may alter behaviour
    BREAKS = 2  # raises or changes results on int64


class Fate(Enum):
    """Where a use takes the counts a tensor holds, beyond what is computed from them
    here (worst last): what PH006 asks of a float tally (a histogram)."""

    LOCAL = 0  # read here: compared, divided, reduced, added into a float64 tensor
    ESCAPES = 1  # returned, passed on, stored: where we cannot follow
    KEPT = 2  # kept past the call: added into state or a tensor carried across loop
    # iterations, copied into a buffer, summed across ranks, made at module level


@dataclass(frozen=True)
class Add:
    statement: cst.CSTNode
    addend: cst.CSTNode
    kind: AddendKind
    # The accumulator's dtype once this add has run (None: a Python number or unknown).
    dtype_after: DType | None
    # a COUNT that is a length (`len(batch)`, `x.shape[0]`): see Value.length
    length: bool = False
    # a literal whole number (`step += 1`): a step counter's add
    step: bool = False
    # run more than once: in a loop, or on a place that outlives the call
    # (`self.step += 1`, `state["step"] += 1`); a local `+= 1` outside a loop is a flag
    repeated: bool = True

    @property
    def adds_count_to_float(self) -> bool:
        return (
            self.kind is AddendKind.COUNT
            and self.dtype_after is not None
            and self.dtype_after.is_floating
        )


@dataclass(frozen=True)
class Use:
    node: cst.CSTNode
    effect: Effect
    reason: str
    # where the use takes the value's counts; None: ESCAPES for an escaping use, else LOCAL
    fate: Fate | None = None

    @property
    def counts_go(self) -> Fate:
        if self.fate is not None:
            return self.fate
        return Fate.ESCAPES if self.effect is Effect.ESCAPES else Fate.LOCAL


@dataclass
class Accumulator:
    creation: Creation
    adds: list[Add] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)

    def float_count_adds(self) -> list[Add]:
        """The adds that put integer counts into a float; none when it also takes
        floats (a loss total that happens to take a count too)."""
        if any(add.kind is AddendKind.FLOATING for add in self.adds):
            return []
        return [add for add in self.adds if add.adds_count_to_float]

    def step_adds(self) -> list[Add]:
        """`step += 1` into a floating tensor: a step counter, which stops at 256 in
        bfloat16 and 2,048 in float16 (PH001 judges a float32 one by whether the
        project can run it in half precision)."""
        if not self.creation.scalar or any(add.kind is AddendKind.FLOATING for add in self.adds):
            return []  # a map's `+= 1` (views covering each pixel) counts overlaps, not steps
        return [add for add in self.adds if add.step and add.repeated and add.dtype_after in HALF_DTYPES + (FLOAT32,)]

    def worst_use(self) -> Use | None:
        worst = None
        for use in self.uses:
            if worst is None or use.effect.value > worst.effect.value:
                worst = use
        return worst


def narrowest_dtype(adds: Iterable[Add]) -> DType:
    """The dtype with the smallest exact-integer limit the adds leave the accumulator in."""
    return min((add.dtype_after for add in adds), key=lambda d: d.exact_integer_limit)


def only_lengths(lengths: Iterable[bool], dtype: DType | None) -> bool:
    """Whether counts that are all lengths (batch sizes, `len()`) sit in a dtype
    that holds them exactly up to 16.7M: float32 or wider. Such totals need that many
    samples between resets, so PH201 (off by default) reports them, not PH001-PH003."""
    lengths = list(lengths)
    return (
        bool(lengths) and all(lengths)
        and dtype is not None and dtype.exact_integer_limit >= FLOAT32.exact_integer_limit
    )  # fmt: skip


class AccumulatorLog:
    """Facts per creation, deduplicated: loops are interpreted more than once. Each
    fact is tagged with the function that recorded it (`scope`), so a function
    interpreted again (with what its call sites pass) replaces its own facts.

    While not recording, the facts are kept in `missed` (when set) as calls that
    record them, so a run that was not recorded can be replayed (semantic.py)."""

    def __init__(self) -> None:
        self._by_creation: dict[int, Accumulator] = {}
        self._seen: set[tuple[int, int, object]] = set()
        # scope -> (dedup key, accumulator, fact) of what it recorded
        self._recorded: dict[str, list[tuple[tuple, Accumulator, object]]] = {}
        self.recording = True
        self.scope = ""
        self.missed: list[tuple[Callable[..., None], tuple]] | None = None
        # how many times a fact of an existing creation changed (expressions.mark)
        self.changes = 0

    def _accumulator(self, creation: Creation) -> Accumulator:
        key = id(creation)
        if key not in self._by_creation:
            self._by_creation[key] = Accumulator(creation)
        return self._by_creation[key]

    def record_add(self, creation: Creation, add: Add) -> None:
        if not self.recording:
            if self.missed is not None:
                self.missed.append((self._in_scope, (self.scope, self.record_add, creation, add)))
            return
        key = (id(creation), id(add.statement), (add.kind, add.dtype_after))
        if key in self._seen:
            return
        self._seen.add(key)
        accumulator = self._accumulator(creation)
        accumulator.adds.append(add)
        self._recorded.setdefault(self.scope, []).append((key, accumulator, add))

    def record_use(self, creation: Creation, use: Use) -> None:
        if not self.recording:
            if self.missed is not None:
                self.missed.append((self._in_scope, (self.scope, self.record_use, creation, use)))
            return
        key = (id(creation), id(use.node), use.effect, use.fate)
        if key in self._seen:
            return
        self._seen.add(key)
        accumulator = self._accumulator(creation)
        accumulator.uses.append(use)
        self._recorded.setdefault(self.scope, []).append((key, accumulator, use))

    def _in_scope(self, scope: str, record: Callable[[Creation, Any], None], creation: Creation, fact: Any) -> None:
        outer, self.scope = self.scope, scope
        try:
            record(creation, fact)
        finally:
            self.scope = outer

    def forget(self, scope: str) -> None:
        """Drop the facts `scope` (or a function nested in it) recorded."""
        nested = scope + "."
        for tag in [t for t in self._recorded if t == scope or t.startswith(nested)]:
            for key, accumulator, fact in self._recorded.pop(tag):
                self._seen.discard(key)
                facts = accumulator.adds if isinstance(fact, Add) else accumulator.uses
                facts[:] = [f for f in facts if f is not fact]

    def accumulators(self) -> list[Accumulator]:
        return [a for a in self._by_creation.values() if a.adds or a.uses]
