"""The fix guard: after a fix's edits, the module outside the edited statements must
be the module it was.

The edits leave the text outside their spans as it was by construction, so what can go
wrong is what that text means: a span that is wider than its author meant (a wrong line
model once made a noqa removal cut whole statements), or an edit that opens a bracket or
a string and swallows the lines after it. The guard compares the statements of the
module before and after: every statement that no edit touches must still be there,
unchanged, in the same order and nesting; a statement an edit touches must still be one
statement of the same kind; the only new statements allowed are imports (the int64 fix
adds `import torch`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import libcst as cst
from .positions import resolve_positions
from .source import LineIndex

_CLAUSES = (cst.ExceptHandler, cst.ExceptStarHandler, cst.Else, cst.Finally, cst.MatchCase, cst.If)
_IMPORTS = (cst.Import, cst.ImportFrom)


@dataclass(frozen=True)
class _Statement:
    node: cst.CSTNode
    kind: str
    depth: int
    # the source of a simple statement (compared when no edit touches it); a compound
    # statement's header is compared by kind and name, its body statement by statement
    text: str | None


def check_edits(old_source: str, old_module: cst.Module, new_module: cst.Module, pieces: list[tuple[int, int, str]]) -> str | None:
    """None when the edits (start, end, content offsets into `old_source`) changed
    nothing outside the statements they touch; else what they changed."""
    index = LineIndex(old_source)
    touched_rows: list[tuple[int, int]] = []
    for start, end, _ in pieces:
        touched_rows.append((index.row_of(start), index.row_of(max(start, end - 1))))
    positions = resolve_positions(old_module)

    def touched(statement: _Statement) -> bool:
        code_range = positions[statement.node]
        first, last = code_range.start.line, code_range.end.line
        return any(first <= high and low <= last for low, high in touched_rows)

    old = list(_statements(old_module))
    new = list(_statements(new_module))
    position = 0
    for statement in old:
        is_touched = touched(statement)
        while position < len(new) and not _same(statement, new[position], is_touched) and _is_import(new[position]):
            position += 1  # an import the fix added
        if position == len(new) or not _same(statement, new[position], is_touched):
            row = positions[statement.node].start.line
            what = "changed" if is_touched else "changed although no edit touches it"
            return f"the {statement.kind} statement on line {row} is gone or {what}"
        position += 1
    extra = [statement for statement in new[position:] if not _is_import(statement)]
    if extra:
        return f"it adds a statement ({extra[0].kind})"
    return None


def _same(old: _Statement, new: _Statement, touched: bool) -> bool:
    if old.kind != new.kind or old.depth != new.depth:
        return False
    return touched or old.text == new.text


def _is_import(statement: _Statement) -> bool:
    return isinstance(statement.node, _IMPORTS)


def _statements(module: cst.Module) -> Iterator[_Statement]:
    """Every statement and clause header, in source order, with its nesting depth."""
    stack: list[tuple[cst.CSTNode, int]] = [(node, 0) for node in reversed(module.body)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                yield _Statement(small, type(small).__name__, depth, module.code_for_node(small))
            continue
        name = getattr(node, "name", None)
        label = type(node).__name__ + (f" {name.value}" if isinstance(name, cst.Name) else "")
        yield _Statement(node, label, depth, None)
        children: list[tuple[cst.CSTNode, int]] = []
        for child in _child_nodes(node):
            if isinstance(child, cst.IndentedBlock):
                children.extend((statement, depth + 1) for statement in child.body)
            elif isinstance(child, cst.SimpleStatementSuite):
                children.append((child, depth + 1))
            elif isinstance(child, _CLAUSES):
                children.append((child, depth))  # `else:`, `except:`, `elif`: beside their statement
        stack.extend(reversed(children))


def _child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, cst.CSTNode))


@lru_cache(maxsize=None)
def _fields(node_type: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(node_type))
