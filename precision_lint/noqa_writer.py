"""`--add-noqa`: write `# noqa: CODE` on every line that has a finding, so a large
repository can adopt the tool and fail only on new hazards."""
from __future__ import annotations

import libcst as cst

from .diagnostics import Diagnostic
from .fix_guard import check_edits
from .source import LineIndex, splice
from .suppression import directive_text, noqa_by_line


class NoqaRefused(Exception):
    """The directives would change the code (a bug): nothing is written."""


def add_noqa(source: str, diagnostics: list[Diagnostic], reason: str = "") -> tuple[str, int]:
    """(new source, number of lines given a directive). A new directive carries
    `reason` after its codes (`# noqa: PH001 counts stay small`), as Ruff's
    `--add-noqa=REASON` writes it; a line that has one keeps its own text. Lines
    ending in a backslash continuation are left alone: a comment there would change
    the code. Raises NoqaRefused when the result would not parse or would change a
    statement."""
    reason = " ".join(reason.split())  # one line, whatever the shell passed
    codes_by_row: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        if diagnostic.code is not None:
            codes_by_row.setdefault(diagnostic.noqa_row, []).append(diagnostic.code)
    if not codes_by_row:
        return source, 0
    existing = noqa_by_line(source)
    index = LineIndex(source)  # the same line model as noqa_by_line and the fixer
    pieces: list[tuple[int, int, str]] = []
    for row, codes in codes_by_row.items():
        if row > index.line_count:
            continue
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
            suffix = f" {reason}" if reason else ""
            pieces.append((end, end, f"  {directive_text(tuple(sorted(set(codes))))}{suffix}"))
    # A directive must land in a real comment: the end of a line inside a multi-line
    # string is not one, and a "comment" there would change the string.
    wanted = {index.row_of(start): codes_by_row[index.row_of(start)] for start, _, _ in pieces}
    text = splice(source, pieces)
    written = noqa_by_line(text)
    misplaced = {row for row, codes in wanted.items() if row not in written or not all(written[row].suppresses(c) for c in codes)}
    if misplaced:
        pieces = [piece for piece in pieces if index.row_of(piece[0]) not in misplaced]
        text = splice(source, pieces)
    if not pieces:
        return source, 0
    try:
        before, after = cst.parse_module(source), cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise NoqaRefused(f"the directives would make code that does not parse ({error.message})") from None
    problem = check_edits(source, before, after, pieces)
    if problem:
        raise NoqaRefused(f"the directives would change the code: {problem}")
    return text, len(pieces)
