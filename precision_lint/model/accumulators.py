"""What the interpreter learns about each accumulator candidate: what is added to
it and how else it is used. Rules read these facts; they never walk code again."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import libcst as cst

from .dtypes import DType
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


@dataclass(frozen=True)
class Add:
    statement: cst.CSTNode
    addend: cst.CSTNode
    kind: AddendKind
    # The accumulator's dtype once this add has run (None: a Python number or unknown).
    dtype_after: DType | None

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


@dataclass
class Accumulator:
    creation: Creation
    adds: list[Add] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)

    def worst_use(self) -> Use | None:
        worst = None
        for use in self.uses:
            if worst is None or use.effect.value > worst.effect.value:
                worst = use
        return worst


class AccumulatorLog:
    """Facts per creation, deduplicated: loops are interpreted more than once."""

    def __init__(self) -> None:
        self._by_creation: dict[int, Accumulator] = {}
        self._seen: set[tuple[int, int, object]] = set()
        self.recording = True

    def _accumulator(self, creation: Creation) -> Accumulator:
        key = id(creation)
        if key not in self._by_creation:
            self._by_creation[key] = Accumulator(creation)
        return self._by_creation[key]

    def record_add(self, creation: Creation, add: Add) -> None:
        key = (id(creation), id(add.statement), (add.kind, add.dtype_after))
        if not self.recording or key in self._seen:
            return
        self._seen.add(key)
        self._accumulator(creation).adds.append(add)

    def record_use(self, creation: Creation, use: Use) -> None:
        key = (id(creation), id(use.node), use.effect)
        if not self.recording or key in self._seen:
            return
        self._seen.add(key)
        self._accumulator(creation).uses.append(use)

    def accumulators(self) -> list[Accumulator]:
        return list(self._by_creation.values())
