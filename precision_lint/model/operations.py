"""What torch operations do to abstract values: promotion in arithmetic, sums,
conversions, views and the dtype of data. Pure functions of values; no walking."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import libcst as cst

from . import torch_api as api
from .dtypes import BOOL, DEFAULT_FLOAT, INT64, DType
from .imports import dotted_name
from .promotion import result_type
from .syntax import find_arg, int_literal
from .values import UNKNOWN, Kind, Value

_ADDITIVE = (cst.Add, cst.Subtract)
_BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor)

DEVICE_WORDS = ("device", "cuda", "cpu", "gpu", "rank", "dev", "mps", "xpu")


def reshaped(receiver: Value, method: str, node: cst.Call) -> Value:
    """The receiver seen through a view or copy: `view(-1)`, `reshape(-1, d)` and
    `flatten()` give one row per element; a per-sample tensor stays one only through
    same-shape copies."""
    # `view(-1)`, `reshape(-1, d)`: the leading dimension gathers every element (or token)
    if method == "flatten" or (method in ("view", "reshape") and node.args and int_literal(node.args[0].value) == -1):
        return replace(receiver, flat=True, per_row=False)
    if receiver.per_row and method not in api.SAME_SHAPE_METHODS:
        return replace(receiver, per_row=False)
    return receiver




def per_row_mask(mask: Value, operands: Sequence[Value]) -> Value:
    """A comparison of a per-sample tensor with scalars is a per-sample mask."""
    python = (Kind.PY_INT, Kind.PY_FLOAT, Kind.PY_BOOL)
    if any(o.per_row for o in operands) and all(o.per_row or o.kind in python for o in operands):
        return replace(mask, per_row=True)
    return mask


def all_lengths(elements: Sequence[Value]) -> bool:
    """Whether the counts among packed values are all lengths (and there is one)."""
    counts = [v for v in elements if v.count or v.float_count or (v.is_integral and v.is_tensor)]
    return bool(counts) and all(v.length for v in counts)


def converts_like_a_tensor(call: cst.Call, value: Value) -> bool:
    """Whether `x.to(arg)` takes arg's dtype: arg is a tensor, or a name that does not
    look like a device (`torch.zeros(n).to(lprobs)`), whose dtype we then do not know."""
    if value.is_tensor:
        return True
    if value.kind is not Kind.UNKNOWN or not call.args or call.args[0].keyword is not None:
        return False
    name = dotted_name(call.args[0].value)
    return name is not None and not any(word in name.lower() for word in DEVICE_WORDS)


def scaled_by_alpha(call: cst.Call, values: Sequence[Value], addend: Value) -> Value:
    """`add_(n, alpha=a)` adds `a * n`: a count only while `a` is a whole number."""
    alpha = find_arg(call, "alpha")
    if alpha is None:
        return addend
    for arg, value in zip(call.args, values):
        if arg is alpha:
            return arithmetic(cst.Multiply(), addend, value)
    return UNKNOWN


def arithmetic(operator: cst.BaseBinaryOp, left: Value, right: Value) -> Value:
    """The value of `left <op> right` (no origins: it is a new object)."""
    python = (Kind.PY_INT, Kind.PY_FLOAT, Kind.PY_BOOL)
    additive = isinstance(operator, _ADDITIVE)
    multiply = type(operator) is cst.Multiply
    floor = type(operator) is cst.FloorDivide
    count = False
    # a sum of lengths is a length; a product of two is an element count
    length = all(v.length for v in (left, right) if v.count)
    if additive:
        count = left.is_integral and right.is_integral and (left.count or right.count)
    elif multiply:
        count = (left.count and right.is_integral) or (right.count and left.is_integral)
        length = False  # `x.size(0) * seq_len` counts tokens
    elif floor:
        count = left.count and right.is_integral
    mask = False
    if isinstance(operator, _BITWISE) or multiply:
        mask = (left.mask and right.mask) or (type(operator) in (cst.BitAnd, cst.BitOr) and (left.mask or right.mask))
    if left.kind in python and right.kind in python:
        number = _folded(operator, left.number, right.number)
        if type(operator) is cst.Divide or Kind.PY_FLOAT in (left.kind, right.kind):
            return Value(Kind.PY_FLOAT, number=float(number) if number is not None else None)
        return Value.py_int(count=count, length=length, number=int(number) if number is not None else None)
    if not (left.is_tensor or right.is_tensor):
        return Value(count=False, mask=mask)
    left_operand, right_operand = left.operand(), right.operand()
    dtype = None
    if left_operand is not None and right_operand is not None:
        dtype = result_type(left_operand, right_operand)
        if type(operator) is cst.Divide and dtype is not None and not dtype.is_floating:
            dtype = DEFAULT_FLOAT
    if mask and dtype is None:
        dtype = BOOL
    zero_dims = [v.zero_dim for v in (left, right) if v.is_tensor]
    zero_dim = None
    if any(z is False for z in zero_dims):
        zero_dim = False
    elif all(z is True for z in zero_dims):
        zero_dim = True
    if dtype is not None and dtype.is_floating:
        count = False
    # index arithmetic on positions (`rows * width + cols`, `arange(n).float() + offset`)
    # gives positions; products with floats (`positions * inv_freq`) are angles
    positions = (left.positions or right.positions) and (
        (additive and all(v.positions or v.is_integral for v in (left, right)))
        or (multiply and not (left.is_floating or right.is_floating or (dtype is not None and dtype.is_floating)))
    )
    return Value.tensor(dtype, zero_dim, count=count, mask=mask, positions=positions, length=count and length)


def _folded(operator: cst.BaseBinaryOp, left: int | float | None, right: int | float | None) -> int | float | None:
    """`E + 1` with `E = 9`: the number, for the operators that keep literals small."""
    if left is None or right is None:
        return None
    if type(operator) is cst.Add:
        return left + right
    if type(operator) is cst.Subtract:
        return left - right
    if type(operator) is cst.Multiply:
        return left * right
    if type(operator) is cst.FloorDivide and right:
        return left // right
    if type(operator) is cst.Divide and right:
        return left / right
    return None


def reduce_sum(source: Value, dtype_given: bool, dtype: DType | None, has_dim: bool, site: int = 0) -> Value:
    zero_dim = True if not has_dim else None  # reducing over `dim` keeps the other dims
    counting = source.mask or source.count
    # summing a per-sample mask counts samples; summing lengths gives a length
    length = not has_dim and ((source.mask and source.per_row) or (source.count and source.length))
    if dtype_given:
        integral = dtype is not None and not dtype.is_floating
        float_count = site if counting and not integral and dtype is not None else 0
        return Value(Kind.TENSOR, dtype, zero_dim, count=counting and integral, float_count=float_count, length=length)
    if source.is_floating:  # `mask.float().sum()`: a float total, even of 0/1 values
        float_count = site if counting else source.float_count
        return Value(Kind.TENSOR, source.dtype, zero_dim, float_count=float_count, length=length or source.length)
    if counting or (source.is_tensor and source.dtype is not None):
        return Value.tensor(INT64, zero_dim, count=counting, length=counting and length)
    return Value.tensor(None, zero_dim)


def cumulative(source: Value, site: int, dtype_given: bool = False, dtype: DType | None = None) -> Value:
    """`mask.cumsum(-1)`: running counts (position ids from an attention mask), in
    int64 for an integer or bool source, in the source's float dtype otherwise;
    `cumsum(dim, dtype=torch.float32)` makes them that dtype."""
    if dtype_given:
        if dtype is None:
            return Value.tensor(None, False)
        source = replace(source, kind=Kind.TENSOR, dtype=dtype, dtype_source=None)
    if not (source.mask or source.count):
        return Value.tensor(source.dtype if source.is_tensor else None, False)
    if source.is_floating:
        return replace(Value.tensor(source.dtype, False, positions=True), float_count=site, dtype_source=source.dtype_source)
    return Value.tensor(source.dtype if dtype_given else INT64, False, count=True, positions=True)


def convert(source: Value, dtype: DType | None, site: int = 0, dtype_source: str | None = None) -> Value:
    """`x.long()`, `x.to(torch.float32)`: a new tensor of `dtype` (None: unknown). A
    count converted to a float dtype remembers where (`float_count`)."""
    if dtype is None:
        return Value.tensor(None, source.zero_dim)
    integral = not dtype.is_floating
    float_count = site if (source.count and not integral) else (source.float_count if not integral else 0)
    if not integral and source.float_count:
        float_count = source.float_count
    return Value(
        Kind.TENSOR,
        dtype,
        source.zero_dim,
        # a float count made integral again (`mask.float().sum().long()`) is a count
        count=(source.count or bool(source.float_count)) and integral,
        mask=source.mask,
        positions=source.positions,
        float_count=float_count,
        length=source.length,
        per_row=source.per_row,
        dtype_source=dtype_source,
        size=source.size,
    )


def _element_dtype(value: Value) -> DType | None:
    if value.kind is Kind.PY_FLOAT:
        return DEFAULT_FLOAT
    if value.kind is Kind.PY_INT:
        return INT64
    if value.kind is Kind.PY_BOOL:
        return BOOL
    return value.dtype if value.is_tensor else None


def data_dtype(node: cst.BaseExpression | None, value: Value | None) -> DType | None:
    """The dtype `torch.tensor(data)` infers from literal data or a known value."""
    if node is None:
        return None
    if type(node) in (cst.List, cst.Tuple):
        dtypes = {data_dtype(element.value, None) for element in node.elements}
        starred = any(type(e) is cst.StarredElement for e in node.elements)
        if None in dtypes or not dtypes or starred:
            # `[float(n)]`: what the elements were evaluated to, when they agree
            known = value is not None and value.kind in (Kind.LIST, Kind.TUPLE) and value.elements and not starred
            return _element_dtype(value.element) if known else None
        if any(d.is_floating for d in dtypes):
            return DEFAULT_FLOAT
        return INT64 if INT64 in dtypes else BOOL
    if type(node) is cst.Float:
        return DEFAULT_FLOAT
    if type(node) is cst.Integer:
        return INT64
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        return data_dtype(node.expression, None)
    if type(node) is cst.Name and node.value in ("True", "False"):
        return BOOL
    if value is None:
        return None
    if value.kind in (Kind.LIST, Kind.TUPLE):
        return _element_dtype(value.element) if value.elements else None
    if value.kind is Kind.PY_FLOAT:
        return DEFAULT_FLOAT
    if value.kind is Kind.PY_INT:
        return INT64
    if value.is_tensor:
        return value.dtype
    return None


def one_element(node: cst.Call, qualified: str) -> bool:
    """Whether a factory makes one element: a size of `()`, `1`, `(1,)`, `[1, 1]`, or
    `torch.tensor` of a number or a one-item list."""
    size_args = [arg for arg in node.args if arg.keyword is None]
    if qualified in ("torch.tensor", "torch.as_tensor"):
        if not size_args:
            return False
        data = size_args[0].value
        return type(data) not in (cst.List, cst.Tuple) or len(data.elements) == 1
    if qualified == "torch.full":
        size_args = size_args[:1]
    if len(size_args) == 1 and type(size_args[0].value) in (cst.Tuple, cst.List):
        dims = [element.value for element in size_args[0].value.elements]
    else:
        dims = [arg.value for arg in size_args]
    return all(int_literal(dim) == 1 for dim in dims)


def literal_size(node: cst.Call, qualified: str, values: Sequence[Value | None]) -> int | None:
    """How many elements a factory makes, when its size (or `torch.tensor`'s data) is
    literal: `torch.ones(3)`, `torch.zeros(2, n)` with `n = 4`, `torch.tensor([1.0, 2.0])`."""
    if qualified in ("torch.tensor", "torch.as_tensor"):
        data = node.args[0].value if node.args and node.args[0].keyword is None else None
        return _literal_elements(data) if data is not None else None
    size_args = [(arg, value) for arg, value in zip(node.args, values) if arg.keyword is None]
    if qualified == "torch.full":
        size_args = size_args[:1]
    if any(arg.star for arg, _ in size_args) or not size_args:
        return None
    if len(size_args) == 1 and isinstance(size_args[0][0].value, (cst.Tuple, cst.List)):
        dims = [int_literal(element.value) for element in size_args[0][0].value.elements]
    else:
        dims = [value.number if value is not None else None for _, value in size_args]
    if any(not isinstance(d, int) or d < 0 for d in dims):
        return None
    total = 1
    for d in dims:
        total *= d
    return total


def _literal_elements(data: cst.BaseExpression) -> int | None:
    """Elements of literal (nested) list/tuple data: 1 for a number."""
    if type(data) in (cst.Integer, cst.Float) or int_literal(data) is not None:
        return 1
    if type(data) in (cst.List, cst.Tuple):
        total = 0
        for element in data.elements:
            if type(element) is cst.StarredElement:
                return None
            inner = _literal_elements(element.value)
            if inner is None:
                return None
            total += inner
        return total
    return None


def shape_is_empty(node: cst.Call, qualified: str) -> bool | None:
    """Whether a factory's size is `()` / `[]` (a 0-dim tensor)."""
    size_args = [arg for arg in node.args if arg.keyword is None]
    if qualified == "torch.full":
        size_args = size_args[:1]
    if any(arg.star for arg in size_args):
        return None
    if len(size_args) == 1 and type(size_args[0].value) in (cst.Tuple, cst.List):
        return len(size_args[0].value.elements) == 0
    if not size_args:
        size = find_arg(node, "size")
        if size is not None and type(size.value) in (cst.Tuple, cst.List):
            return len(size.value.elements) == 0
        return None
    return False

