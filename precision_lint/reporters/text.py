"""Human output: `full` (with the source line and what would fix it) and `concise`,
one headline per finding: `path:row:col: CODE severity [*] message` (in a notebook
`nb.ipynb:cell 3:row:col: ...`), then the summary."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TextIO

from ..diagnostics import Applicability, Diagnostic, Severity
from ..failures import is_failure
from ..rule_pages import rule_url
from ..source import LineIndex, read_source
from ..style import PLAIN, Style
from .counts import errors_and_warnings


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


def source_key(filename: str, cell: int | None) -> str:
    """How `texts` (sources already in hand) name a file, or one notebook cell."""
    return filename if cell is None else f"{filename}\0cell {cell}"


def place(diagnostic: Diagnostic) -> str:
    return f"{display_path(diagnostic.filename)}{diagnostic.cell_suffix}:{diagnostic.location.row}:{diagnostic.location.column}:"


def headline(diagnostic: Diagnostic, unsafe: bool, style: Style = PLAIN) -> str:
    severity = diagnostic.severity.value
    colour = "bold_red" if diagnostic.severity is Severity.ERROR else "yellow"
    code = ""
    if diagnostic.code:
        code = " " + style.link(style.paint(diagnostic.code, colour), rule_url(diagnostic.code) if style.enabled else None)
    marker = style.paint(_marker(diagnostic, unsafe).strip(), "cyan")
    marker = f"{marker} " if marker else ""
    # a file that does not parse reads as Ruff prints it: `path:2:5: SyntaxError: ...`
    severity = f" {style.paint(severity, colour)}" if diagnostic.code else ""
    return f"{style.paint(place(diagnostic), 'bold')}{code}{severity} {marker}{diagnostic.message}"


def write_concise(diagnostics: list[Diagnostic], out: TextIO, unsafe: bool, style: Style = PLAIN) -> None:
    for diagnostic in diagnostics:
        out.write(headline(diagnostic, unsafe, style) + "\n")


def write_full(
    diagnostics: list[Diagnostic], out: TextIO, unsafe: bool, texts: dict[str, str] | None = None, style: Style = PLAIN
) -> None:
    """`texts`: source already in hand (stdin, notebook cells), by source_key,
    instead of reading the file."""
    sources: dict[str, LineIndex | None] = {name: LineIndex(text) for name, text in (texts or {}).items()}
    for diagnostic in diagnostics:
        out.write(headline(diagnostic, unsafe, style) + "\n")
        # a failure is about the file (not read, not parsed): no code to point at
        index = None if is_failure(diagnostic) else _index(source_key(diagnostic.filename, diagnostic.cell), sources)
        if index is not None and diagnostic.location.row <= index.line_count:
            _snippet(diagnostic, index, out)
        if diagnostic.fix is not None:
            kind = {"safe": "", "unsafe": " (unsafe)", "displayonly": " (display only)"}[diagnostic.fix.applicability.value]
            out.write(f"  = {style.paint('help' + kind, 'cyan')}: {diagnostic.fix.message}\n")
        if diagnostic.note:
            out.write(f"  = {style.paint('note', 'bold')}: {diagnostic.note}\n")
        for related in diagnostic.related:
            elsewhere = f" of cell {related.cell}" if related.cell is not None and related.cell != diagnostic.cell else ""
            out.write(f"  = {related.message}: line {related.location.row}{elsewhere}\n")
        out.write("\n")


def _index(filename: str, sources: dict[str, LineIndex | None]) -> LineIndex | None:
    if filename not in sources:
        if "\0" in filename:  # a notebook cell not handed over: nothing to show
            return None
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


def write_summary(
    remaining: list[Diagnostic], fixed: list[Diagnostic], out: TextIO, unsafe: bool, fixing: bool, style: Style = PLAIN
) -> None:
    fixed_count = len(fixed)
    total = len(remaining) + fixed_count
    if total == 0:
        out.write(style.paint("All checks passed!", "green") + "\n")
        return
    found = errors_and_warnings([*remaining, *fixed])
    if fixing or fixed_count:
        out.write(f"Found {found} ({fixed_count:,} fixed, {len(remaining):,} remaining).\n")
    else:
        out.write(f"Found {found}.\n")
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


def statistics(diagnostics: list[Diagnostic], unsafe: bool) -> list[dict]:
    """Per rule, most frequent first: Ruff's `--statistics --output-format json` rows."""
    counts = Counter((d.code or "syntax-error", d.name) for d in diagnostics)
    fixable = Counter((d.code or "syntax-error", d.name) for d in diagnostics if _marker(d, unsafe))
    return [
        {"code": code, "name": name, "count": count, "fixable": fixable[(code, name)] > 0, "fixable_count": fixable[(code, name)]}
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def write_statistics(diagnostics: list[Diagnostic], out: TextIO, unsafe: bool) -> None:
    for row in statistics(diagnostics, unsafe):
        mark = "[*]" if row["fixable"] else "[ ]"
        out.write(f"{row['count']}\t{row['code']}\t{mark} {row['name']}\n")


def write_fixed(fixed: list[Diagnostic], out: TextIO) -> None:
    if not fixed:
        return
    out.write(f"Fixed {errors_and_warnings(fixed)}:\n")
    by_file: dict[str, Counter] = {}
    for diagnostic in fixed:
        where = display_path(diagnostic.filename) + diagnostic.cell_suffix
        by_file.setdefault(where, Counter())[(diagnostic.code, diagnostic.name)] += 1
    for where, counts in by_file.items():
        out.write(f"- {where}:\n")
        for (code, name), count in sorted(counts.items()):
            out.write(f"    {count} × {code} ({name})\n")
