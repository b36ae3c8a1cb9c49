"""Node positions in the coordinates of the source text itself.

libcst computes positions on the code it regenerates from the tree, and that code is
not always the source: it drops a form feed that starts a top-level line. Edits are
applied to the source, so a position is translated to the source's columns before it
becomes an edit, and a line that cannot be matched gets no edit at all.

libcst's PositionProvider regenerates the whole module (measured: 336 of 580 ms for a
2,000-line file with one finding), so findings are placed by StatementPositions: only
the top-level statement that holds a node is regenerated, from the line where the
standard parser says it starts, and only when that statement's code is the source's
own text there; anything else falls back to the whole-module pass.
"""
from __future__ import annotations

import bisect
from typing import Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from . import speedups
from .diagnostics import Location
from .parsing import forget_starts, top_level_starts
from .source import split_lines, split_lines_keeping_ends

try:  # libcst's own codegen state: not its public API, so a libcst without it is served the slow way
    from libcst.metadata.position_provider import PositionProvidingCodegenState
except ImportError:  # pragma: no cover - depends on the installed libcst
    PositionProvidingCodegenState = None


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
    """The module (and its source) are done with."""
    global _last
    _last = None
    forget_starts()


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


def positions_for(module: cst.Module, source: str) -> "SourcePositions | StatementPositions":
    """Positions for placing findings: statement by statement where that is exact."""
    if speedups.enabled("positions") and PositionProvidingCodegenState is not None:
        local = StatementPositions.build(module, source)
        if local is not None:
            return local
    return SourcePositions(module, source)


class _Ranges:
    """What libcst's codegen state records positions into (a provider's `_computed`)."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, object] = {}


class NotLocal(Exception):
    """A statement's regenerated code is not the source's text where it should start."""


class StatementPositions:
    """The positions of nodes in the coordinates of the source, computed for the
    top-level statements that hold them. Where a statement's code differs from the
    source, raise NotLocal (the caller then places every finding the slow way)."""

    def __init__(self, module: cst.Module, source: str, starts: list[int]) -> None:
        self.module = module
        self.lines = split_lines_keeping_ends(source)
        self.starts = starts  # 1-based line where each statement's code (leading lines included) begins
        self.source = source
        self.line_starts = _line_starts(self.lines)  # offset where each line begins
        self._ranges = _Ranges()
        self._done: set[int] = set()

    @classmethod
    def build(cls, module: cst.Module, source: str) -> "StatementPositions | None":
        starts = statement_starts(module, source)
        return None if starts is None else cls(module, source, starts)

    def _range(self, node: cst.CSTNode):
        found = self._ranges._computed.get(node)
        if found is None:
            for number in self._candidates(node):
                self._generate(number)
                found = self._ranges._computed.get(node)
                if found is not None:
                    break
            else:
                raise NotLocal("no statement holds the node")
        return found

    def _candidates(self, node: cst.CSTNode):
        """The statements that may hold `node`: those where its code occurs in the
        source (each is regenerated in turn until one has the node), else all."""
        code = self.module.code_for_node(node)
        tried = 0
        if code:
            at = self.source.find(code)
            while at >= 0 and tried < _MAX_CANDIDATES:
                row = bisect.bisect_right(self.line_starts, at)
                number = bisect.bisect_right(self.starts, row) - 1
                if number >= 0 and number not in self._done:
                    tried += 1
                    yield number
                at = self.source.find(code, at + 1)
        yield from (number for number in range(len(self.module.body)) if number not in self._done)

    def _generate(self, number: int) -> None:
        if number in self._done:
            return
        self._done.add(number)
        try:  # libcst's internals: if they changed, the caller takes the public whole-module pass
            state = PositionProvidingCodegenState(
                default_indent=self.module.default_indent, default_newline=self.module.default_newline, provider=self._ranges
            )  # fmt: skip
            state.line = self.starts[number]
            self.module.body[number]._codegen(state)
            code = "".join(state.tokens)
        except Exception as error:
            raise NotLocal(f"statement {number + 1} cannot be regenerated alone: {error}") from error
        first = self.starts[number] - 1
        count = len(split_lines_keeping_ends(code))
        text = "".join(self.lines[first : first + count])
        at_end = first + count >= len(self.lines)
        if code != text and not (at_end and not self.module.has_trailing_newline and code == text + self.module.default_newline):
            raise NotLocal(f"statement {number + 1} is not reproduced exactly")

    def rows(self, node: cst.CSTNode) -> tuple[int, int]:
        code_range = self._range(node)
        return code_range.start.line, code_range.end.line

    def span(self, node: cst.CSTNode) -> tuple[Location, Location] | None:
        code_range = self._range(node)
        return Location(code_range.start.line, code_range.start.column + 1), Location(code_range.end.line, code_range.end.column + 1)

    def approximate_span(self, node: cst.CSTNode) -> tuple[Location, Location]:
        exact = self.span(node)
        assert exact is not None
        return exact


# statements regenerated for one node before all of them are (a node whose code is
# `x` occurs everywhere)
_MAX_CANDIDATES = 8


def _line_starts(lines: list[str]) -> list[int]:
    starts, offset = [], 0
    for line in lines:
        starts.append(offset)
        offset += len(line)
    return starts


def statement_starts(module: cst.Module, source: str) -> list[int] | None:
    """The line where each top-level statement's code begins (its leading comment and
    blank lines included), from the standard parser's line numbers; None when they
    cannot be matched to libcst's statements one to one."""
    if "\x0c" in source or source.count("\r") != source.count("\r\n"):
        return None  # form feeds and lone CRs: where libcst's code and the source part
    firsts = top_level_starts(source)
    if firsts is None:
        return None
    if len(firsts) != len(module.body):
        return None
    return [first - len(statement.leading_lines) for first, statement in zip(firsts, module.body)]
