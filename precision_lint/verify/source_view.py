"""Positions, parents and text of the nodes of one module, and a rewriter that emits
a node's text with edits inside it (the fix's edits, instrumentation) applied.

No torch here: this runs in the parent process.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..model.semantic import SemanticModel
from ..model.walk import iter_children, walk
from ..source import LineIndex


def all_nodes(root: cst.CSTNode):
    yield root
    yield from walk(root)


class SourceIndex:
    """Positions, parents and text of nodes in one module."""

    def __init__(self, model: SemanticModel, text: str) -> None:
        self.module = model.module
        self.text = text
        self.index = LineIndex(text)
        self.positions = MetadataWrapper(model.module, unsafe_skip_copy=True).resolve(PositionProvider)
        self.parents: dict[int, cst.CSTNode] = {}
        for node in all_nodes(model.module):
            for child in iter_children(node):
                self.parents[id(child)] = node

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        span = self.positions[node]
        return (
            self.index.offset(span.start.line, span.start.column + 1),
            self.index.offset(span.end.line, span.end.column + 1),
        )

    def extent(self, node: cst.CSTNode) -> tuple[int, int]:
        """The node's offsets with its own parentheses (positions leave them out)."""
        start, end = self.offsets(node)
        text = self.text
        for _ in getattr(node, "lpar", ()):
            while start > 0 and text[start - 1] in " \t\r\n\\":
                start -= 1
            if start > 0 and text[start - 1] == "(":
                start -= 1
        for _ in getattr(node, "rpar", ()):
            while end < len(text) and text[end] in " \t\r\n\\":
                end += 1
            if end < len(text) and text[end] == ")":
                end += 1
        return start, end

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def raw(self, node: cst.CSTNode) -> str:
        start, end = self.offsets(node)
        return self.text[start:end]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def enclosing(self, node: cst.CSTNode, kinds) -> cst.CSTNode | None:
        current = self.parent(node)
        while current is not None and not isinstance(current, kinds):
            current = self.parent(current)
        return current

    def ancestors(self, node: cst.CSTNode):
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def small_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The small statement (`x += 1`, `f(x)`) that holds `node`."""
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseSmallStatement):
            if isinstance(current, cst.BaseCompoundStatement):
                return None
            current = self.parent(current)
        return current


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] by `text`, or by `transform(inner)` where `inner` is
    the range with the edits nested in it applied. For equal ranges the lower
    `depth` is the outer edit."""

    start: int
    end: int
    text: str = ""
    transform: Callable[[str], str] | None = None
    depth: int = 0


# depths for equal ranges: instrumentation wraps the replay's mapping of a call,
# which wraps the fix's own edit of it
WRAP, MAPPING, FIX = 0, 5, 10


class Rewriter:
    """Text edits over a module's source, rendered per node. Edits must nest or be
    disjoint; an insertion is an edit with start == end."""

    def __init__(self, source: SourceIndex, edits: list[Edit] | None = None) -> None:
        self.source = source
        self.edits: list[Edit] = list(edits or [])

    def copy(self) -> "Rewriter":
        return Rewriter(self.source, self.edits)

    def replace(self, node: cst.CSTNode, text: str, depth: int = MAPPING) -> None:
        start, end = self.source.offsets(node)
        self.edits.append(Edit(start, end, text, None, depth))

    def transform(self, node: cst.CSTNode, function: Callable[[str], str], depth: int = MAPPING) -> None:
        start, end = self.source.offsets(node)
        self.edits.append(Edit(start, end, "", function, depth))

    def wrap(self, node: cst.CSTNode, before: str, after: str) -> None:
        self.transform(node, lambda inner: f"{before}{inner}{after}", WRAP)

    def add(self, edit: Edit) -> None:
        self.edits.append(edit)

    def render(self, node: cst.CSTNode) -> str:
        start, end = self.source.offsets(node)
        return self.render_range(start, end)

    def render_range(self, start: int, end: int) -> str:
        inside = [e for e in self.edits if start <= e.start and e.end <= end]
        return _apply(self.source.text, start, end, inside)


def _apply(text: str, start: int, end: int, edits: list[Edit]) -> str:
    """Apply nesting edits to text[start:end]: a replacement drops the edits inside
    it (a fix that drops an argument drops what was inside it); a transform gets the
    text of its range with the edits inside it applied."""
    ordered = sorted(edits, key=lambda e: (e.start, -(e.end - e.start), e.depth))
    out: list[str] = []
    position = start
    index = 0
    while index < len(ordered):
        edit = ordered[index]
        index += 1
        nested = []
        while index < len(ordered) and ordered[index].start < edit.end:
            if ordered[index].end <= edit.end:  # edits that overlap without nesting are dropped
                nested.append(ordered[index])
            index += 1
        out.append(text[position:edit.start])
        out.append(edit.transform(_apply(text, edit.start, edit.end, nested)) if edit.transform else edit.text)
        position = edit.end
    out.append(text[position:end])
    return "".join(out)
