"""Syntax helpers the model shares: which storage an expression names, and which
argument of a call is which."""
from __future__ import annotations

import libcst as cst


def target_key(node: cst.BaseExpression, self_name: str | None) -> str | None:
    """The binding a target stands for: `acc` -> "acc", `self.acc` -> "self.acc", and a
    string-keyed item of one as a place of its own: `state["step"]` -> "state['step']",
    `self.stats["tokens"]` -> "self.stats['tokens']"."""
    if type(node) is cst.Name:
        return node.value
    if (
        type(node) is cst.Attribute
        and self_name is not None
        and type(node.value) is cst.Name
        and node.value.value == self_name
    ):
        return f"self.{node.attr.value}"
    key = string_key(node)
    if key is not None:
        base = target_key(node.value, self_name)  # type: ignore[attr-defined]
        return None if base is None else item_key(base, key)
    return None


def item_key(base: str, key: str) -> str:
    return f"{base}[{key!r}]"


def string_key(node: cst.BaseExpression) -> str | None:
    """"step" for `state["step"]`: a subscript by one string literal."""
    if type(node) is not cst.Subscript or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if type(index) is cst.Index and type(index.value) is cst.SimpleString:
        value = index.value.evaluated_value
        return value if isinstance(value, str) else None
    return None


def same_place(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """Whether two expressions name the same storage: `acc`, `self.acc`, `acc[i]`."""
    return place_text(a) is not None and place_text(a) == place_text(b)


def place_text(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Integer:
        return node.value
    if type(node) is cst.SimpleString:
        value = node.evaluated_value
        return repr(value) if isinstance(value, str) else None
    if type(node) is cst.Attribute:
        base = place_text(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    if type(node) is cst.Subscript:
        base = place_text(node.value)
        parts = []
        for element in node.slice:
            if type(element.slice) is not cst.Index:
                return None
            part = place_text(element.slice.value)
            if part is None:
                return None
            parts.append(part)
        return None if base is None else f"{base}[{','.join(parts)}]"
    return None


def find_arg(call: cst.Call, keyword: str, position: int | None = None) -> cst.Arg | None:
    """The argument passed as `keyword=` or at `position` (unknown after a `*args`)."""
    positional: int | None = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star == "*":
            positional = None
        elif not arg.star and positional is not None:
            if positional == position:
                return arg
            positional += 1
    return None


def public_attribute(key: str) -> bool:
    name = key.split(".", 1)[1]
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))



def int_literal(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal, negative ones (`-1`) included."""
    if type(node) is cst.Integer:
        return int(node.value, 0)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return -int(node.expression.value, 0)
    return None
