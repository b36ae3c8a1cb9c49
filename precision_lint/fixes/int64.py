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
from ..model.dtypes import LEGACY_TENSOR_TYPES
from ..model.expressions import find_arg
from ..model.imports import ImportMap, dotted_name
from ..rule import NodeEdit


@dataclass(frozen=True)
class Int64Rewrite:
    edits: tuple[NodeEdit, ...]
    description: str


class NoRewrite(Exception):
    """The creation cannot be rewritten; the message says why."""


def int64_rewrite(node: cst.CSTNode, module: cst.Module, imports: ImportMap) -> Int64Rewrite:
    if isinstance(node, cst.Float):
        return Int64Rewrite((NodeEdit(node, _whole_number(node)),), f"Start from `{_whole_number(node)}`")
    if not isinstance(node, cst.Call):
        raise NoRewrite("the accumulator is not created by a call we can rewrite")
    alias, import_edits = _torch_module(imports, module.default_newline)
    qualified = _call_name(node, imports)
    if qualified is not None:
        module_name, _, attr = qualified.rpartition(".")
        if module_name in api.LEGACY_CONSTRUCTOR_MODULES and attr in LEGACY_TENSOR_TYPES:
            func = cst.parse_expression(f"{alias}{module_name[len('torch'):]}.LongTensor")
            new = node.with_changes(func=func, args=_whole_data(node.args, 0))
            return _result(node, new, module, import_edits, f"Use `{alias}{module_name[len('torch'):]}.LongTensor`")
    is_new_method = isinstance(node.func, cst.Attribute) and node.func.attr.value in api.NEW_METHODS
    if qualified not in api.FACTORY_FUNCTIONS and qualified not in api.LIKE_FACTORIES and not is_new_method:
        raise NoRewrite("the accumulator is not created by a factory we can rewrite")
    args = list(node.args)
    if qualified in ("torch.tensor", "torch.as_tensor"):
        args = _whole_data(args, 0, "data")
    elif qualified in ("torch.full", "torch.full_like") or (is_new_method and node.func.attr.value == "new_full"):
        args = _whole_data(args, 1, "fill_value")
    dtype_text = f"{alias}.int64"
    new = node.with_changes(args=_with_dtype(args, cst.parse_expression(dtype_text)))
    return _result(node, new, module, import_edits, f"Use `dtype={dtype_text}`")


def _result(node, new, module: cst.Module, import_edits, description: str) -> Int64Rewrite:
    return Int64Rewrite((NodeEdit(node, module.code_for_node(new)), *import_edits), description)


def _call_name(node: cst.Call, imports: ImportMap) -> str | None:
    name = dotted_name(node.func)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    qualified_head = imports.qualify_name(head)
    if qualified_head is None:
        return None
    return f"{qualified_head}.{rest}" if rest else qualified_head


def _torch_module(imports: ImportMap, newline: str) -> tuple[str, tuple[NodeEdit, ...]]:
    """How to spell the torch module here, and the import to add if it is not bound."""
    alias = imports.torch_alias()
    if alias is not None:
        return alias, ()
    if imports.first_import is None:
        raise NoRewrite("the module binds no name for `torch` to write `torch.int64` with")
    return "torch", (NodeEdit(imports.first_import, f"import torch{newline}", line_start=True),)


def _whole_number(node: cst.Float) -> str:
    value = float(node.value)
    if not value.is_integer():
        raise NoRewrite(f"the initial value {node.value} is not a whole number")
    return str(int(value))


def _whole_data(args, position: int, keyword: str = "data") -> list[cst.Arg]:
    """Float literals in the data argument become ints (`[0.0, 0.0]` -> `[0, 0]`)."""
    args = list(args)
    probe = cst.Call(func=cst.Name("f"), args=args)
    target = find_arg(probe, keyword, position)
    if target is None:
        return args
    index = next(i for i, arg in enumerate(args) if arg is target)
    args[index] = target.with_changes(value=_whole_literal(target.value))
    return args


def _whole_literal(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, cst.Float):
        return cst.Integer(_whole_number(node))
    if isinstance(node, (cst.List, cst.Tuple)):
        return node.with_changes(
            elements=[e.with_changes(value=_whole_literal(e.value)) for e in node.elements]
        )
    if isinstance(node, cst.UnaryOperation):
        return node.with_changes(expression=_whole_literal(node.expression))
    if isinstance(node, (cst.Integer, cst.Name)):
        return node  # ints, and names whose values we cannot see: the dtype casts them
    raise NoRewrite("the initial data is not a literal we can convert to whole numbers")


def _with_dtype(args: list[cst.Arg], dtype: cst.BaseExpression) -> list[cst.Arg]:
    """Set `dtype=` (replacing it, or appending it in the call's own layout)."""
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "dtype":
            args[index] = arg.with_changes(value=dtype)
            return args
    new_arg = cst.Arg(
        keyword=cst.Name("dtype"),
        value=dtype,
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    if not args:
        return [new_arg]
    separator: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace(" ")
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma.whitespace_after
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        # keep the trailing comma (and the line break before `)`) after the new arg
        new_arg = new_arg.with_changes(comma=last.comma)
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator))
    return args + [new_arg]
