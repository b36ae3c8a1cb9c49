"""Human output: `full` (with the source line and what would fix it) and `concise`."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TextIO

from ..diagnostics import Applicability, Diagnostic
from ..failures import is_failure
from ..source import LineIndex, read_source


def display_path(filename: str) -> str:
    try:
        return os.path.relpath(filename)
    except ValueError:
        return filename


def _marker(diagnostic: Diagnostic, unsafe: bool) -> str:
    fix = diagnostic.fix
    if fix is None:
        return ""
    if fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE):
        return "[*] "
    return ""


def headline(diagnostic: Diagnostic, unsafe: bool) -> str:
    where = f"{display_path(diagnostic.filename)}:{diagnostic.location.row}:{diagnostic.location.column}:"
    code = f" {diagnostic.code}" if diagnostic.code else ""
    return f"{where}{code} {_marker(diagnostic, unsafe)}{diagnostic.message}"


def write_concise(diagnostics: list[Diagnostic], out: TextIO, unsafe: bool) -> None:
    for diagnostic in diagnostics:
        out.write(headline(diagnostic, unsafe) + "\n")


def write_full(diagnostics: list[Diagnostic], out: TextIO, unsafe: bool, texts: dict[str, str] | None = None) -> None:
    """`texts`: source already in hand (stdin), by filename, instead of reading the file."""
    sources: dict[str, LineIndex | None] = {name: LineIndex(text) for name, text in (texts or {}).items()}
    for diagnostic in diagnostics:
        out.write(headline(diagnostic, unsafe) + "\n")
        # a failure is about the file (not read, not parsed): no code to point at
        index = None if is_failure(diagnostic) else _index(diagnostic.filename, sources)
        if index is not None and diagnostic.location.row <= index.line_count:
            _snippet(diagnostic, index, out)
        if diagnostic.fix is not None:
            kind = {"safe": "", "unsafe": " (unsafe)", "displayonly": " (display only)"}[diagnostic.fix.applicability.value]
            out.write(f"  = help{kind}: {diagnostic.fix.message}\n")
        if diagnostic.note:
            out.write(f"  = note: {diagnostic.note}\n")
        for related in diagnostic.related:
            out.write(f"  = {related.message}: line {related.location.row}\n")
        out.write("\n")


def _index(filename: str, sources: dict[str, LineIndex | None]) -> LineIndex | None:
    if filename not in sources:
        try:
            sources[filename] = LineIndex(read_source(Path(filename)).text)
        except (OSError, ValueError, SyntaxError):  # unreadable, undecodable
            sources[filename] = None
    return sources[filename]


def _snippet(diagnostic: Diagnostic, index: LineIndex, out: TextIO) -> None:
    row = diagnostic.location.row
    line = index.line(row)
    gutter = len(str(row))
    start = diagnostic.location.column - 1
    if diagnostic.end_location.row == row:
        width = max(1, diagnostic.end_location.column - diagnostic.location.column)
    else:
        width = max(1, len(line) - start)
    out.write(f"{' ' * gutter} |\n{row} | {line}\n{' ' * gutter} | {' ' * start}{'^' * width} {diagnostic.code or ''}\n")


def write_summary(remaining: list[Diagnostic], fixed_count: int, out: TextIO, unsafe: bool, fixing: bool) -> None:
    total = len(remaining) + fixed_count
    if total == 0:
        out.write("All checks passed!\n")
        return
    noun = "error" if total == 1 else "errors"
    if fixing or fixed_count:
        out.write(f"Found {total} {noun} ({fixed_count} fixed, {len(remaining)} remaining).\n")
    else:
        out.write(f"Found {total} {noun}.\n")
    unchecked = len({d.filename for d in remaining if is_failure(d)})
    if unchecked:
        files = "file was" if unchecked == 1 else "files were"
        out.write(f"{unchecked} {files} not fully checked or fixed (PH9xx above).\n")
    safe = sum(1 for d in remaining if d.fix and d.fix.applicability is Applicability.SAFE)
    hidden = sum(1 for d in remaining if d.fix and d.fix.applicability is Applicability.UNSAFE)
    if unsafe:
        safe, hidden = safe + hidden, 0
    if safe:
        option = "--fix --unsafe-fixes" if unsafe else "--fix"
        out.write(f"[*] {safe} fixable with the `{option}` option.\n")
    if hidden:
        fixes = "fix" if hidden == 1 else "fixes"
        out.write(f"({hidden} hidden {fixes} can be enabled with the `--unsafe-fixes` option.)\n")


def write_statistics(diagnostics: list[Diagnostic], out: TextIO, unsafe: bool) -> None:
    counts = Counter((d.code or "syntax-error", d.name) for d in diagnostics)
    fixable = {(d.code or "syntax-error", d.name) for d in diagnostics if _marker(d, unsafe)}
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        mark = "[*]" if (code, name) in fixable else "[ ]"
        out.write(f"{count}\t{code}\t{mark} {name}\n")


def write_fixed(fixed: list[Diagnostic], out: TextIO) -> None:
    if not fixed:
        return
    out.write(f"Fixed {len(fixed)} error{'s' if len(fixed) != 1 else ''}:\n")
    by_file: dict[str, Counter] = {}
    for diagnostic in fixed:
        by_file.setdefault(diagnostic.filename, Counter())[(diagnostic.code, diagnostic.name)] += 1
    for filename, counts in by_file.items():
        out.write(f"- {display_path(filename)}:\n")
        for (code, name), count in sorted(counts.items()):
            out.write(f"    {count} × {code} ({name})\n")
