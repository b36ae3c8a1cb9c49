"""PyTorch's type promotion, as a table and the three-tier rule of `torch.result_type`.

Tested against real torch in tests/test_promotion.py over every pair of operand kinds.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .dtypes import (
    BFLOAT16,
    BOOL,
    DEFAULT_FLOAT,
    FLOAT16,
    FLOAT32,
    INT16,
    INT64,
    RUNTIME_FLOAT,
    UINT8,
    DType,
)


class Tier(Enum):
    """How strongly an operand takes part in promotion (torch's ResultTypeState)."""

    DIMENSIONED = 0  # a tensor with at least one dimension
    ZERO_DIM = 1  # a 0-dim tensor, e.g. `x.sum()`
    SCALAR = 2  # a Python number


@dataclass(frozen=True)
class Operand:
    dtype: DType
    # None: a tensor whose dimensionality is not known.
    tier: Tier | None


def promote_types(a: DType, b: DType) -> DType:
    """torch.promote_types for the dtypes we model."""
    if a == b:
        return a
    if a == BOOL:
        return b
    if b == BOOL:
        return a
    if a.category is not b.category:
        return a if a.category.value > b.category.value else b
    if a.is_floating:
        if RUNTIME_FLOAT in (a, b):
            # the run-time width is bfloat16, float16 or float32: a wider fixed float
            # wins; against a half type the result is as unknown as the width
            other = b if a is RUNTIME_FLOAT else a
            return other if other.bits >= 32 else RUNTIME_FLOAT
        if {a, b} == {FLOAT16, BFLOAT16}:
            return FLOAT32
        return a if a.bits > b.bits else b
    # Both integers. uint8 with a signed type needs the next signed width.
    if UINT8 in (a, b):
        other = b if a == UINT8 else a
        return INT16 if other.bits == 8 else other
    return a if a.bits > b.bits else b


def _scalar_dtype(dtype: DType) -> DType:
    """The dtype a Python scalar stands for: int is int64, float the default dtype."""
    if dtype.is_floating:
        return DEFAULT_FLOAT
    return INT64 if dtype.is_integer else BOOL


def _combine_categories(higher: DType | None, lower: DType | None) -> DType | None:
    # Mirrors c10 `combine_categories`: a lower tier only matters when it is of a
    # higher category (or the higher tier is bool).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating:
        return higher
    if higher == BOOL or lower.is_floating:
        return promote_types(higher, lower)
    if lower.category.value > higher.category.value:
        return promote_types(higher, lower)
    return higher


def _result_for_tiers(operands: list[tuple[DType, Tier]]) -> DType:
    by_tier: dict[Tier, DType | None] = {tier: None for tier in Tier}
    for dtype, tier in operands:
        if tier is Tier.SCALAR:
            dtype = _scalar_dtype(dtype)
        current = by_tier[tier]
        by_tier[tier] = dtype if current is None else promote_types(current, dtype)
    result = _combine_categories(
        by_tier[Tier.DIMENSIONED],
        _combine_categories(by_tier[Tier.ZERO_DIM], by_tier[Tier.SCALAR]),
    )
    assert result is not None
    return result


def result_type(*operands: Operand) -> DType | None:
    """The dtype of an elementwise op on `operands`, or None when it depends on
    dimensionality we do not know."""
    choices: list[list[tuple[DType, Tier]]] = [[]]
    for operand in operands:
        tiers = [operand.tier] if operand.tier is not None else [Tier.DIMENSIONED, Tier.ZERO_DIM]
        choices = [prefix + [(operand.dtype, tier)] for prefix in choices for tier in tiers]
    results = {_result_for_tiers(choice) for choice in choices}
    return results.pop() if len(results) == 1 else None


def can_cast(source: DType, target: DType) -> bool:
    """Whether an in-place op may write a `source` result into a `target` tensor
    (torch.can_cast): never down a category."""
    return source.category.value <= target.category.value

