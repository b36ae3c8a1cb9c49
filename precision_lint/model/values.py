"""The abstract value the interpreter gives each expression."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import libcst as cst

from .dtypes import BOOL, FLOAT64, INT64, DType
from .promotion import Operand, Tier


class Kind(Enum):
    UNKNOWN = "unknown"
    PY_INT = "int"
    PY_FLOAT = "float"
    PY_BOOL = "bool"
    TENSOR = "tensor"
    SHAPE = "shape"  # `x.shape` / `x.size()`: indexing it gives a count
    DTYPE = "dtype"  # a dtype object, e.g. `torch.float32` or `x.dtype`
    SELF = "self"  # the instance in a method


@dataclass(eq=False)
class Creation:
    """Where a tensor (or a Python float that will become one) is made: an
    accumulator candidate. Identity is the node."""

    node: cst.CSTNode
    # dtype at creation; None for a Python float literal (it becomes the default
    # float dtype once a tensor is added to it) or when not known.
    dtype: DType | None
    # qualified name of the function or class where it is made
    scope: str = ""


@dataclass(frozen=True)
class Value:
    kind: Kind = Kind.UNKNOWN
    dtype: DType | None = None  # for TENSOR and DTYPE
    zero_dim: bool | None = None  # for TENSOR: True 0-dim, False has dims, None unknown
    count: bool = False  # integer-valued count (len, numel, mask.sum(), ...)
    mask: bool = False  # elementwise boolean (or 0/1 from one), if it is a tensor
    origins: frozenset[Creation] = field(default_factory=frozenset)
    positions: bool = False  # an index sequence (`torch.arange`), whatever its dtype
    # a module buffer (`register_buffer`), or the dtype of one: `model.to(torch.bfloat16)`
    # and `.half()` cast it, so code that follows its dtype follows the cast
    buffer: bool = False
    # id() of the call where integer counts became a float tensor (`mask.float().sum()`,
    # `count.half()`, `torch.cat([loss, count])`); 0 when they did not
    float_count: int = 0
    # the count is a length: `len(x)` or one dimension (`x.shape[0]`, `x.size(1)`), or a
    # sum of lengths. It grows by a batch size per step, not by a tensor's element count,
    # so in float32 it needs 16.7M samples (or words) before it rounds.
    length: bool = False
    # one element per sample: `x.reshape(n, -1).sum(-1)` with `n` a length. Counting
    # a mask of it counts samples, so that count is a length.
    per_row: bool = False
    # one row per element (`x.nonzero()`, `x.flatten()`, `x.view(-1)`, `x[mask]`), or
    # the shape of such a tensor: its length counts elements, not samples
    flat: bool = False

    # -- construction helpers -------------------------------------------------
    @staticmethod
    def tensor(
        dtype: DType | None,
        zero_dim: bool | None = None,
        *,
        count: bool = False,
        mask: bool = False,
        origins: frozenset[Creation] = frozenset(),
        positions: bool = False,
        flat: bool = False,
        length: bool = False,
        per_row: bool = False,
    ) -> "Value":
        return Value(
            Kind.TENSOR, dtype, zero_dim, count, mask, origins, positions,
            length=length, per_row=per_row, flat=flat,
        )  # fmt: skip

    @staticmethod
    def py_int(count: bool = False, length: bool = False) -> "Value":
        return Value(Kind.PY_INT, count=count, length=count and length)

    @staticmethod
    def mask_value(known_tensor: bool) -> "Value":
        if known_tensor:
            return Value.tensor(BOOL, mask=True)
        return Value(Kind.UNKNOWN, mask=True)

    def with_origins(self, origins: frozenset[Creation]) -> "Value":
        return replace(self, origins=origins)

    def without_origins(self) -> "Value":
        return replace(self, origins=frozenset()) if self.origins else self

    # -- questions ------------------------------------------------------------
    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def is_floating(self) -> bool:
        """Known to hold floating values (a float tensor or a Python float)."""
        if self.kind is Kind.PY_FLOAT:
            return True
        return self.kind is Kind.TENSOR and self.dtype is not None and self.dtype.is_floating

    @property
    def is_integral(self) -> bool:
        """Known to hold whole numbers: a count, a Python int, an integer or bool tensor."""
        if self.count or self.kind in (Kind.PY_INT, Kind.PY_BOOL):
            return True
        return self.kind is Kind.TENSOR and self.dtype is not None and not self.dtype.is_floating

    def operand(self) -> Operand | None:
        """This value as a promotion operand, if its dtype is known."""
        if self.kind is Kind.PY_INT:
            return Operand(INT64, Tier.SCALAR)
        if self.kind is Kind.PY_FLOAT:
            return Operand(FLOAT64, Tier.SCALAR)
        if self.kind is Kind.PY_BOOL:
            return Operand(BOOL, Tier.SCALAR)
        if self.kind is Kind.TENSOR and self.dtype is not None:
            tier = None
            if self.zero_dim is True:
                tier = Tier.ZERO_DIM
            elif self.zero_dim is False:
                tier = Tier.DIMENSIONED
            return Operand(self.dtype, tier)
        return None


UNKNOWN = Value()


@dataclass(frozen=True)
class CallFact:
    """A call the interpreter saw: `torch.histc(...)` (qualified) or `buf.scatter_add_(...)`
    (method on a value). Argument and receiver values are in the model's `values`."""

    node: cst.Call
    qualified: str | None
    method: str | None


def join(a: Value, b: Value) -> Value:
    """The value that covers both branches of a control-flow merge."""
    if a is b or a == b:
        return a
    origins = a.origins | b.origins
    if a.kind is b.kind and a.dtype == b.dtype:
        return Value(
            a.kind,
            a.dtype,
            a.zero_dim if a.zero_dim == b.zero_dim else None,
            a.count and b.count,
            a.mask and b.mask,
            origins,
            a.positions and b.positions,
            a.buffer or b.buffer,
            a.float_count or b.float_count,
            a.length and b.length,
            a.per_row and b.per_row,
            a.flat or b.flat,
        )
    return Value(
        count=False, mask=a.mask and b.mask, origins=origins, buffer=a.buffer or b.buffer,
        float_count=a.float_count or b.float_count, length=a.length and b.length, flat=a.flat or b.flat,
    )  # fmt: skip
