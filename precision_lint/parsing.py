"""Parsing with libcst, a long module in pieces.

libcst's parse grows faster than the module: measured on one file made of Megatron-LM's
modules, 70 µs a line at 1,000 lines, 88 at 10,000, 145 at 100,000, and 1.1 GB at
100,000 lines. The same text parsed in pieces of a few hundred lines, each piece whole
top-level statements, costs about 62 µs a line at any length and a third of the memory.
On files of ordinary length (up to a few thousand lines) the pieces cost more than they
save, so only long files are parsed in pieces.

The pieces are joined into the Module a whole parse gives: the comment and blank lines
that end one piece (its footer) lead the next piece's first statement, which is where
libcst puts them in a whole parse. The join is kept only where it is exact: every piece
detected the same indentation and newline (a piece's default is what a `None` indent
or newline in its nodes stands for), no piece but the first has a header, and the
joined module's code is the source itself; anything else is parsed whole.
tests/test_speed.py holds the joined module node for node to the whole parse.
"""
from __future__ import annotations

import os

import libcst as cst

from . import speedups
from .source import split_lines_keeping_ends, standard_tree

# Files of at least this many lines are parsed in pieces; each piece holds whole
# top-level statements, a new one starting once a piece has this many lines.
# PRECISION_LINT_PIECES_FROM lowers both for benchmarks/same_findings.py, which shows
# that findings do not change when nearly every file is parsed in many pieces.
MIN_LINES = int(os.environ.get("PRECISION_LINT_PIECES_FROM", "") or 20_000)
PIECE_LINES = min(500, MIN_LINES)

_last_starts: tuple[str, list[int] | None] | None = None


def top_level_starts(source: str) -> list[int] | None:
    """The 1-based line where each top-level statement begins (its first decorator for
    a decorated definition; `a = 1; b = 2` is one), as the standard parser numbers
    lines; None when it refuses the source. The last answer is kept: a long module with
    findings is asked twice (to parse it, then to place the findings)."""
    global _last_starts
    if _last_starts is not None and _last_starts[0] is source:
        return _last_starts[1]
    try:
        tree = standard_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        starts = None
    else:
        starts = []
        for node in tree.body:
            decorators = getattr(node, "decorator_list", ())
            first = min([node.lineno, *(d.lineno for d in decorators)])
            if not starts or first != starts[-1]:
                starts.append(first)
        del tree
    _last_starts = (source, starts)
    return starts


def forget_starts() -> None:
    global _last_starts
    _last_starts = None


def parse_module(source: str) -> cst.Module:
    """libcst's Module for `source`, as cst.parse_module gives it (and its errors)."""
    if speedups.enabled("pieces") and source.count("\n") >= MIN_LINES:
        joined = parse_in_pieces(source, PIECE_LINES)
        if joined is not None:
            return joined
    return cst.parse_module(source)


def piece_starts(source: str, piece_lines: int) -> list[int] | None:
    """The line where each piece begins (the first is 1), or None where the module is
    not cut: it is one piece, or holds form feeds or lone CRs (where libcst's lines and
    the standard parser's part)."""
    if "\x0c" in source or source.count("\r") != source.count("\r\n"):
        return None
    starts = top_level_starts(source)
    if not starts or len(starts) < 2:
        return None
    cuts = [1]
    for start in starts[1:]:
        if start - cuts[-1] >= piece_lines:
            cuts.append(start)
    return cuts if len(cuts) > 1 else None


def parse_in_pieces(source: str, piece_lines: int) -> cst.Module | None:
    """The module parsed piece by piece and joined, or None where the join would not
    be exactly the whole parse (the caller then parses the whole)."""
    cuts = piece_starts(source, piece_lines)
    if cuts is None:
        return None
    lines = split_lines_keeping_ends(source)
    texts = ["".join(lines[begin - 1 : end - 1]) for begin, end in zip(cuts, [*cuts[1:], len(lines) + 1])]
    try:
        pieces = [cst.parse_module(text) for text in texts]
    except Exception:  # a syntax error, or anything else: the whole parse reports it
        return None
    first = pieces[0]
    settings = (first.default_indent, first.default_newline, first.encoding)
    if any((p.default_indent, p.default_newline, p.encoding) != settings or p.header for p in pieces[1:]):
        return None
    body: list[cst.BaseStatement] = list(first.body)
    for before, piece in zip(pieces, pieces[1:]):
        if not piece.body:
            return None
        opening = piece.body[0]
        if before.footer:
            opening = opening.with_changes(leading_lines=[*before.footer, *opening.leading_lines])
        body.append(opening)
        body.extend(piece.body[1:])
    joined = cst.Module(
        body=body, header=first.header, footer=pieces[-1].footer, encoding=first.encoding,
        default_indent=first.default_indent, default_newline=first.default_newline,
        has_trailing_newline=pieces[-1].has_trailing_newline,
    )  # fmt: skip
    if joined.code != source:
        return None
    return joined
