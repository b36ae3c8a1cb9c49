"""Node positions in the coordinates of the source text itself.

libcst computes positions on the code it regenerates from the tree, and that code is
not always the source: it drops a form feed that starts a top-level line. Edits are
applied to the source, so a position is translated to the source's columns before it
becomes an edit, and a line that cannot be matched gets no edit at all.
"""
from __future__ import annotations

from typing import Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .diagnostics import Location
from .source import split_lines


_last: tuple[cst.Module, Mapping] | None = None


def resolve_positions(module: cst.Module) -> Mapping:
    """libcst's positions (a pass over the whole module) for `module`. The last result
    is kept until forget_positions(): the fixer's guard asks again for the module that
    was just checked."""
    global _last
    if _last is not None and _last[0] is module:
        return _last[1]
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    _last = (module, positions)
    return positions


def forget_positions() -> None:
    global _last
    _last = None


class SourcePositions:
    def __init__(self, module: cst.Module, source: str) -> None:
        self.positions = resolve_positions(module)
        generated = module.code
        # row -> generated column -> source column, for the rows that differ; None when
        # the row structure itself differs (then no position is exact).
        self._columns: dict[int, list[int]] | None = {}
        self._unmatched: set[int] = set()
        if generated != source:
            self._columns = _column_maps(generated, source, self._unmatched)

    def rows(self, node: cst.CSTNode) -> tuple[int, int]:
        code_range = self.positions[node]
        return code_range.start.line, code_range.end.line

    def span(self, node: cst.CSTNode) -> tuple[Location, Location] | None:
        """The node's exact start and end in the source, or None where the source
        line cannot be matched to libcst's."""
        code_range = self.positions[node]
        start = self._to_source(code_range.start.line, code_range.start.column, end=False)
        end = self._to_source(code_range.end.line, code_range.end.column, end=True)
        return None if start is None or end is None else (start, end)

    def approximate_span(self, node: cst.CSTNode) -> tuple[Location, Location]:
        """For reporting: exact where possible, else libcst's own columns."""
        exact = self.span(node)
        if exact is not None:
            return exact
        code_range = self.positions[node]
        return (
            Location(code_range.start.line, code_range.start.column + 1),
            Location(code_range.end.line, code_range.end.column + 1),
        )

    def _to_source(self, row: int, column: int, end: bool) -> Location | None:
        if self._columns is None or row in self._unmatched:
            return None
        mapping = self._columns.get(row)
        if mapping is None:
            return Location(row, column + 1)
        if end and column > 0:
            return Location(row, mapping[column - 1] + 2)
        return Location(row, mapping[min(column, len(mapping) - 1)] + 1)


def _column_maps(generated: str, source: str, unmatched: set[int]) -> dict[int, list[int]] | None:
    generated_lines, source_lines = split_lines(generated), split_lines(source)
    if len(generated_lines) != len(source_lines):
        return None
    maps: dict[int, list[int]] = {}
    for row, (ours, theirs) in enumerate(zip(generated_lines, source_lines), start=1):
        if ours == theirs:
            continue
        mapping = _subsequence_map(ours, theirs)
        if mapping is None:
            unmatched.add(row)
        else:
            maps[row] = mapping
    return maps


def _subsequence_map(ours: str, theirs: str) -> list[int] | None:
    """For each character of `ours` (and one past its end), its column in `theirs`,
    when `ours` is `theirs` with some characters left out; else None."""
    mapping: list[int] = []
    position = 0
    for character in ours:
        position = theirs.find(character, position)
        if position < 0:
            return None
        mapping.append(position)
        position += 1
    mapping.append(mapping[-1] + 1 if mapping else 0)
    return mapping
