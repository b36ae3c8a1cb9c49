"""`--add-noqa`: write `# noqa: CODE` on every line that has a finding, so a large
repository can adopt the tool and fail only on new hazards."""
from __future__ import annotations

import re

import libcst as cst

from .diagnostics import Diagnostic
from .source import LineIndex, splice
from .suppression import directive_text, noqa_by_line

_LINE_END = re.compile(r"\r\n|\r|\n")


def add_noqa(source: str, diagnostics: list[Diagnostic]) -> tuple[str, int]:
    """(new source, number of lines given a directive). Lines ending in a backslash
    continuation are left alone: a comment there would change the code."""
    codes_by_row: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        if diagnostic.code is not None:
            codes_by_row.setdefault(diagnostic.noqa_row, []).append(diagnostic.code)
    if not codes_by_row:
        return source, 0
    existing = noqa_by_line(source)
    index = LineIndex(source)
    pieces: list[tuple[int, int, str]] = []
    for row, codes in codes_by_row.items():
        line = index.line(row)
        start = index.starts[row - 1]
        directive = existing.get(row)
        if directive is not None:
            if directive.codes is None:
                continue  # a bare noqa already covers it
            merged = tuple(dict.fromkeys([*directive.codes, *sorted(set(codes))]))
            pieces.append((start + directive.start, start + directive.end, directive_text(merged)))
        elif not line.rstrip().endswith("\\"):
            end = start + len(line)
            pieces.append((end, end, f"  {directive_text(tuple(sorted(set(codes))))}"))
    text = splice(source, pieces)
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError:
        return source, 0  # never write code that does not parse
    return text, len(pieces)
