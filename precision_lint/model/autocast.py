"""Autocast as the interpreter meets it: `with torch.autocast(...)` regions, and the
matmul-like ops inside which positions are cast to bfloat16/float16 even when they
were built in float32 (`positions @ inv_freq`, `F.linear(coords, w)`, a contracting
`einsum`). Outside any region the op still runs in low precision when its caller is
under autocast, which the project shows or not (model/evidence.py)."""
from __future__ import annotations

from typing import NamedTuple, Sequence

import libcst as cst

from . import torch_api as api
from .values import Value


class AutocastUse(NamedTuple):
    node: cst.CSTNode  # the matmul, linear or einsum
    # True: inside an enabled `with torch.autocast(...)` of the same function;
    # None: in no region here (it depends on the caller)
    region: bool | None


def region_of(call: cst.Call, qualified: str | None, dtype_of_arg) -> bool | None:
    """For a `with` item: True for autocast to a low dtype, False for `enabled=False`
    or a float32/float64 autocast, None when the item is not autocast.
    `dtype_of_arg(node)` is the dtype an argument evaluates to (None: not known)."""
    if qualified not in api.AUTOCAST_CONTEXTS:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "enabled":
            if type(arg.value) is cst.Name and arg.value.value == "False":
                return False
    dtypes = [dtype_of_arg(arg.value) for arg in call.args if arg.keyword is None or arg.keyword.value == "dtype"]
    if any(dtype is not None and dtype.is_floating and dtype.exact_integer_limit > 2**11 for dtype in dtypes):
        return False  # `torch.autocast("cuda", torch.float32)`: the region runs in full precision
    return True


def casts_positions(operands: Sequence[Value]) -> bool:
    """Whether a matmul-like op takes floating positions (float32 ones included)."""
    return any(v.positions and (v.dtype is None or v.dtype.is_floating) for v in operands)


def contracts(call: cst.Call) -> bool:
    """Whether an einsum sums over an index (`"i,ij->j"`): it then runs as a bmm,
    which autocast casts; an outer product (`"i,j->ij"`) stays float32."""
    if not call.args or type(call.args[0].value) is not cst.SimpleString:
        return True  # an equation we cannot read: assume the common, contracting case
    equation = str(call.args[0].value.evaluated_value).replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    letters = [c for c in inputs if c.isalpha()]
    if not arrow:
        return any(letters.count(c) > 1 for c in letters)
    return any(c not in output for c in letters)
