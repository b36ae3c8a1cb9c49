"""Rewrite an accumulator's creation so it holds int64.

`torch.zeros(1, dtype=torch.float)` -> `torch.zeros(1, dtype=torch.int64)`,
`torch.zeros(1)` -> `torch.zeros(1, dtype=torch.int64)`, `torch.tensor(0.0)` ->
`torch.tensor(0, dtype=torch.int64)`, `0.0` -> `0`, `torch.cuda.FloatTensor([0])`
-> `torch.cuda.LongTensor([0])`. Always `int64`: `torch.int` is int32.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..model import torch_api as api
from ..model.dtypes import CONVERSION_METHODS, LEGACY_TENSOR_TYPES, NUMPY_DTYPES, dtype_from_qualified_name
from ..model.expressions import find_arg
from ..model.imports import ImportMap, dotted_name
from ..rule import NodeEdit
from .imports import spell_int64


@dataclass(frozen=True)
class Int64Rewrite:
    edits: tuple[NodeEdit, ...]
    description: str


class NoRewrite(Exception):
    """The creation cannot be rewritten; the message says why."""


def int64_rewrite(node: cst.CSTNode, module: cst.Module, imports: ImportMap, module_name: str = "") -> Int64Rewrite:
    """`module_name` (the module's dotted name) tells its own package's imports from
    third-party ones when `import torch` must be added (fixes/imports.py)."""
    if isinstance(node, cst.Float):
        return Int64Rewrite((NodeEdit(node, _whole_number(node)),), f"Start from `{_whole_number(node)}`")
    if not isinstance(node, cst.Call):
        raise NoRewrite("the accumulator is not created by a call we can rewrite")
    conversion = _conversion_rewrite(node, imports, module, module_name)
    if conversion is not None:
        return conversion
    numpy = _numpy_rewrite(node, imports)
    if numpy is not None:
        return numpy
    qualified = imports.qualify_dotted(dotted_name(node.func))
    if qualified is not None:
        owner, _, attr = qualified.rpartition(".")
        if owner in api.LEGACY_CONSTRUCTOR_MODULES and attr in LEGACY_TENSOR_TYPES:
            spelling = _torch_spelling(module, imports, module_name, need_module=True)
            constructor = f"{spelling.module}{owner[len('torch'):]}.LongTensor"
            edits = (NodeEdit(node.func, constructor), *_whole_data(node.args, 0), *spelling.edits)
            return Int64Rewrite(edits, f"Use `{constructor}`")
    is_new_method = isinstance(node.func, cst.Attribute) and node.func.attr.value in api.NEW_METHODS
    if qualified not in api.FACTORY_FUNCTIONS and qualified not in api.LIKE_FACTORIES and not is_new_method:
        raise NoRewrite("the accumulator is not created by a factory we can rewrite")
    data_edits: tuple[NodeEdit, ...] = ()
    if qualified in ("torch.tensor", "torch.as_tensor"):
        data_edits = _whole_data(node.args, 0, "data")
    elif qualified in ("torch.full", "torch.full_like") or (is_new_method and node.func.attr.value == "new_full"):
        data_edits = _whole_data(node.args, 1, "fill_value")
    spelling = _torch_spelling(module, imports, module_name)
    dtype_text = spelling.dtype
    edits = (*data_edits, _dtype_edit(node, dtype_text), *spelling.edits)
    return Int64Rewrite(edits, f"Use `dtype={dtype_text}`")


def _numpy_rewrite(node: cst.Call, imports: ImportMap) -> Int64Rewrite | None:
    """`np.int32(0)` -> `np.int64(0)`; `np.zeros(k, dtype=np.int32)` -> `dtype=np.int64`."""
    qualified = imports.qualify_dotted(dotted_name(node.func))
    if qualified is None or not qualified.startswith("numpy."):
        return None
    if isinstance(node.func, cst.Attribute) and qualified[len("numpy.") :] in NUMPY_DTYPES:
        return Int64Rewrite((NodeEdit(node.func.attr, "int64"),), "Count in `int64`")
    arg = find_arg(node, "dtype")
    if arg is None:
        return None
    if isinstance(arg.value, cst.SimpleString):
        quote = arg.value.quote
        return Int64Rewrite((NodeEdit(arg.value, f"{quote}int64{quote}"),), "Use `dtype=\"int64\"`")
    if isinstance(arg.value, cst.Attribute):
        return Int64Rewrite((NodeEdit(arg.value.attr, "int64"),), "Use `dtype=int64`")
    return None


def _conversion_rewrite(node: cst.Call, imports: ImportMap, module: cst.Module, module_name: str) -> Int64Rewrite | None:
    """`torch.zeros(1).half()` -> `.long()`; `.to(torch.bfloat16)` -> `.to(torch.int64)`."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call)):
        return None
    if func.attr.value in CONVERSION_METHODS:
        return Int64Rewrite((NodeEdit(func.attr, "long"),), "Convert with `.long()`")
    if func.attr.value in ("to", "type"):
        dtype_args = [a for a in node.args if dtype_from_qualified_name(imports.qualify_dotted(dotted_name(a.value)))]
        if len(dtype_args) == 1:
            spelling = _torch_spelling(module, imports, module_name)
            return Int64Rewrite(
                (NodeEdit(dtype_args[0].value, spelling.dtype), *spelling.edits), f"Convert to `{spelling.dtype}`"
            )
    return None


def _torch_spelling(module: cst.Module, imports: ImportMap, module_name: str, need_module: bool = False):
    """How to write torch's int64 here, and the import to add (sorted as isort would)."""
    spelling = spell_int64(module, imports, module_name, need_module)
    if spelling is None:
        raise NoRewrite("the module binds no name for `torch` to write `torch.int64` with")
    return spelling


def _whole_number(node: cst.Float) -> str:
    value = float(node.value)
    if not value.is_integer():
        raise NoRewrite(f"the initial value {node.value} is not a whole number")
    if abs(value) >= 2**63:
        raise NoRewrite(f"the initial value {node.value} does not fit in int64")
    return str(int(value))


def _whole_data(args, position: int, keyword: str = "data") -> tuple[NodeEdit, ...]:
    """Float literals in the data argument become ints (`[0.0, 0.0]` -> `[0, 0]`)."""
    target = find_arg(cst.Call(func=cst.Name("f"), args=list(args)), keyword, position)
    return () if target is None else tuple(_whole_literals(target.value))


def _whole_literals(node: cst.BaseExpression) -> list[NodeEdit]:
    if isinstance(node, cst.Float):
        return [NodeEdit(node, _whole_number(node))]
    if isinstance(node, (cst.List, cst.Tuple)):
        return [edit for element in node.elements for edit in _whole_literals(element.value)]
    if isinstance(node, cst.UnaryOperation):
        return _whole_literals(node.expression)
    if isinstance(node, (cst.Integer, cst.Name)):
        return []  # ints, and names whose values we cannot see: the dtype casts them
    raise NoRewrite("the initial data is not a literal we can convert to whole numbers")


def _dtype_edit(call: cst.Call, dtype: str) -> NodeEdit:
    """Set `dtype=`: replace its value, or add it after the last argument (before a
    trailing comma, keeping the call's own line breaks)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return NodeEdit(arg.value, dtype)
    if not call.args:
        raise NoRewrite("the factory call has no arguments to add `dtype=` after")
    return NodeEdit(call.args[-1], f", dtype={dtype}", where="after")
