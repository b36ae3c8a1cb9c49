"""`--output-format github`: GitHub Actions workflow commands, one annotation per
diagnostic, e.g.

    ::error title=precision-lint (PH001),file=src/train.py,line=5,endLine=5,col=11,endColumn=25::src/train.py:5:11: PH001 ...

Escaping follows actions/toolkit's `command.ts`. GitHub shows only 10 error and 10
warning annotations per step (50 per job) and drops the rest silently, so a
workflow should also print the full report; `summary_note` says how many were cut.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from ..diagnostics import Applicability, Diagnostic, Severity

# Annotations GitHub shows per step for each of `error` and `warning`.
STEP_LIMIT = 10

_HELP = {
    Applicability.SAFE: "help",
    Applicability.UNSAFE: "help (unsafe)",
    Applicability.DISPLAY_ONLY: "help (display only)",
}


def relative_path(filename: str, root: Path | str) -> str:
    """`filename` (absolute or relative to the cwd) relative to `root`, with `/`."""
    absolute = os.path.abspath(filename)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:  # another drive on Windows
        relative = absolute
    return relative.replace(os.sep, "/")


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(diagnostic: Diagnostic, root: Path | str) -> str:
    path = relative_path(diagnostic.filename, root)
    start, end = diagnostic.location, diagnostic.end_location
    command = "error" if diagnostic.severity is Severity.ERROR else "warning"
    properties = [("title", f"precision-lint ({diagnostic.code or 'syntax-error'})"), ("file", path)]
    # a notebook's rows count in its cell, not in the .ipynb file: the annotation is the
    # file's, and the message says the cell and row
    if diagnostic.cell is None:
        properties += [("line", str(start.row)), ("endLine", str(end.row))]
    # GitHub ignores the columns of an annotation that spans lines.
    if diagnostic.cell is None and start.row == end.row:
        properties += [("col", str(start.column)), ("endColumn", str(end.column))]
    code = f" {diagnostic.code}" if diagnostic.code else ""
    message = f"{path}{diagnostic.cell_suffix}:{start.row}:{start.column}:{code} {diagnostic.message}"
    if diagnostic.fix is not None:
        message += f"\n  {_HELP[diagnostic.fix.applicability]}: {diagnostic.fix.message}"
    if diagnostic.note:
        message += f"\n  note: {diagnostic.note}"
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{command} {rendered}::{escape_data(message)}"


def write(diagnostics: list[Diagnostic], out: TextIO, root: Path) -> None:
    for diagnostic in diagnostics:
        out.write(annotation(diagnostic, root) + "\n")


def summary_note(diagnostics: list[Diagnostic]) -> str | None:
    """A markdown sentence for the log or `$GITHUB_STEP_SUMMARY` when GitHub will
    drop some of the annotations; None when it shows them all."""
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    warnings = len(diagnostics) - errors
    hidden = []
    count = 0
    for total, noun in ((errors, "errors"), (warnings, "warnings")):
        if total > STEP_LIMIT:
            hidden.append(f"{total - STEP_LIMIT} of {total} {noun}")
            count += total - STEP_LIMIT
    if not hidden:
        return None
    verb = "was" if count == 1 else "were"
    noun = "an annotation" if count == 1 else "annotations"
    return (
        f"**Note:** GitHub shows at most {STEP_LIMIT} error and {STEP_LIMIT} warning annotations per step, "
        f"so {' and '.join(hidden)} {verb} not shown as {noun}; the full report lists every finding."
    )
