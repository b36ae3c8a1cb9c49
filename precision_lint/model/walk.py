"""Fast traversal of libcst trees. libcst's visitor machinery rebuilds every node it
passes (measured: about 8x the parse time on Megatron-LM), so the model walks the
dataclass fields itself."""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Iterator

import libcst as cst


@lru_cache(maxsize=None)
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(node_type))


def _node_types() -> frozenset[type]:
    """Every concrete libcst node class: a set lookup by type is several times faster
    than isinstance against the ABC-based CSTNode."""
    found, pending = set(), [cst.CSTNode]
    while pending:
        for subclass in pending.pop().__subclasses__():
            if subclass not in found:
                found.add(subclass)
                pending.append(subclass)
    return frozenset(found)


_NODE_TYPES = _node_types()


def is_node(value: object) -> bool:
    return type(value) in _NODE_TYPES


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind in _NODE_TYPES:
            yield value
        elif kind is list or kind is tuple:
            for item in value:
                if type(item) in _NODE_TYPES:
                    yield item


# fields that hold only layout (whitespace, comments, parentheses, punctuation)
_LAYOUT = frozenset(
    {
        "lpar", "rpar", "leading_lines", "trailing_whitespace", "leading_whitespace", "header", "footer",
        "indent", "semicolon", "comma", "equal", "colon", "dot", "lbracket", "rbracket", "lbrace", "rbrace",
        "first_colon", "second_colon", "lines_after_decorators",
    }
)  # fmt: skip


@lru_cache(maxsize=None)
def _code_fields(node_type: type) -> tuple[str, ...]:
    return tuple(name for name in _child_fields(node_type) if name not in _LAYOUT and not name.startswith("whitespace"))


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of `node` that hold code: iter_children without the layout."""
    found = []
    for name in _code_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind in _NODE_TYPES:
            found.append(value)
        elif kind is list or kind is tuple:
            found.extend(item for item in value if type(item) in _NODE_TYPES)
    return found


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below `node` (not `node` itself), depth first."""
    stack = list(iter_children(node))
    stack.reverse()
    while stack:
        current = stack.pop()
        yield current
        children = list(iter_children(current))
        children.reverse()
        stack.extend(children)


def concrete_types(*bases: type) -> frozenset[type]:
    """The node classes that are `bases` or derive from them: `type(node) in` this set
    answers isinstance without its ABC check (libcst's classes are ABCs)."""
    # by the classes' own bases: issubclass asks each ABC's subclass hook, which cost
    # 20 ms of every process's start (libcst registers no virtual subclasses)
    return frozenset(kind for kind in _NODE_TYPES if any(base in kind.__mro__ for base in bases))


_STATEMENTS = concrete_types(cst.BaseStatement)
_HOLD_STATEMENTS = concrete_types(
    cst.BaseSuite, cst.ExceptHandler, cst.ExceptStarHandler, cst.Else, cst.Finally, cst.MatchCase, cst.If
)


# the fields of a compound statement (and of what it holds: a suite, `else:`,
# `except:`) through which its blocks are reached; the others hold expressions
_BLOCK_FIELDS = frozenset({"body", "orelse", "handlers", "finalbody", "cases"})


@lru_cache(maxsize=None)
def _block_fields(node_type: type) -> tuple[str, ...]:
    return tuple(name for name in _code_fields(node_type) if name in _BLOCK_FIELDS)


def child_statements(compound: cst.CSTNode) -> Iterator[cst.BaseStatement]:
    """The statements directly inside a compound statement's blocks (`if`, `else`,
    `except`, `finally`, `case`, a def's body), without entering expressions."""
    for name in _block_fields(type(compound)):
        value = getattr(compound, name)
        for child in value if type(value) is list or type(value) is tuple else (value,):
            kind = type(child)
            if kind in _STATEMENTS:
                yield child
            elif kind in _HOLD_STATEMENTS:
                yield from child_statements(child)
