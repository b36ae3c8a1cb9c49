"""Positions between the engine and the editor.

The engine counts 1-based rows and 1-based columns in code points, with `\\n`,
`\\r\\n` and a lone `\\r` ending a line (source.LineIndex). LSP counts 0-based lines
and 0-based characters in the negotiated encoding's units (UTF-16 unless the client
offers another) and ends lines the same three ways, so only the columns need work.
A form feed or U+2028 is not a line break here, although str.splitlines says so.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import Location
from ..source import LineIndex

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def _units(text: str, encoding: str) -> int:
    """How many of the encoding's units `text` takes."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _code_points(line: str, units: int, encoding: str) -> int:
    """How many code points of `line` the first `units` units cover (a position
    inside a character counts as before it)."""
    if encoding == UTF32:
        return min(units, len(line))
    taken = 0
    for count, character in enumerate(line):
        width = _units(character, encoding)
        if taken + width > units:
            return count
        taken += width
    return len(line)


@dataclass(frozen=True)
class LspPosition:
    line: int  # 0-based
    character: int  # 0-based, in the encoding's units


class PositionMap:
    """Converts positions for one text in one encoding."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        self.index = LineIndex(text)

    def _line(self, row: int) -> str:
        if row < 1 or row > self.index.line_count:
            return ""
        return self.index.line(row)

    def to_lsp(self, location: Location) -> LspPosition:
        """Engine (row, column) -> LSP (line, character); past the end clamps to it."""
        if location.row > self.index.line_count:
            last = self.index.line_count
            return LspPosition(last - 1, _units(self._line(last), self.encoding))
        line = self._line(location.row)
        return LspPosition(location.row - 1, _units(line[: max(location.column - 1, 0)], self.encoding))

    def to_engine(self, line: int, character: int) -> Location:
        """LSP (line, character) -> engine (row, column). A line past the end means the
        end of the text; a character past the line's end means its end (as LSP says)."""
        if line >= self.index.line_count:
            last = self.index.line_count
            return Location(last, len(self._line(last)) + 1)
        text = self._line(line + 1)
        return Location(line + 1, _code_points(text, character, self.encoding) + 1)

    def offset(self, line: int, character: int) -> int:
        """The string offset of an LSP position."""
        if line >= self.index.line_count:
            return len(self.text)
        location = self.to_engine(line, character)
        return self.index.offset(location.row, location.column)

    def position_at(self, offset: int) -> LspPosition:
        """The LSP position of a string offset."""
        row = _row_of(self.index.starts, offset)
        column = offset - self.index.starts[row - 1] + 1
        return self.to_lsp(Location(row, column))


def _row_of(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low + 1
