"""Applies fixes until nothing changes: apply non-overlapping edits, re-parse,
re-check, repeat. Never returns source that does not parse."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from .diagnostics import Applicability, Diagnostic, Edit, Fix
from .engine import check_source
from .source import LineIndex, splice

MAX_ITERATIONS = 100


@dataclass
class FixOutcome:
    source: str
    fixed: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    # Set when fixing stopped early: an edit did not parse, or no fixed point.
    error: str | None = None


def applicable(diagnostic: Diagnostic, unsafe: bool, unfixable: frozenset[str]) -> bool:
    fix = diagnostic.fix
    if fix is None or diagnostic.code in unfixable:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def mark_unfixable(diagnostics: list[Diagnostic], unfixable: frozenset[str]) -> list[Diagnostic]:
    """Fixes of `unfixable` rules are shown, never applied: display-only."""
    if not unfixable:
        return diagnostics
    return [
        replace(d, fix=replace(d.fix, applicability=Applicability.DISPLAY_ONLY))
        if d.fix is not None and d.code in unfixable
        else d
        for d in diagnostics
    ]


def apply_fixes(source: str, fixes: list[Fix]) -> tuple[str, list[int]]:
    """Apply whole fixes whose edits do not overlap an earlier one's; return the new
    source and the indexes of the fixes applied. Identical edits (two fixes adding
    the same import) are applied once."""
    index = LineIndex(source)
    taken: list[tuple[int, int, str]] = []
    applied: list[int] = []
    for number, fix in enumerate(fixes):
        spans = [(index.offset(*_pos(e.location)), index.offset(*_pos(e.end_location)), e.content) for e in fix.edits]
        new = [span for span in spans if span not in taken]
        if any(_overlaps(span, other) for span in new for other in taken):
            continue
        taken.extend(new)
        applied.append(number)
    return splice(source, taken), applied


def _pos(location) -> tuple[int, int]:
    return location.row, location.column


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # insertions conflict only at the same point
        return a[0] == b[0] or (b[0] < a[0] < b[1]) or (a[0] < b[0] < a[1])
    return a[0] < b[1] and b[0] < a[1]


def fix_source(
    source: str,
    filename: str,
    codes: frozenset[str],
    unsafe: bool = False,
    unfixable: frozenset[str] = frozenset(),
    allowed: frozenset[tuple[str, int, int]] | None = None,
    project: dict | None = None,
) -> FixOutcome:
    """`allowed` (from `check --fix --verify`): only the findings at these (code, row,
    column) of the original source may be fixed, in a single round. `project`: the
    slice of the project index the file is checked with."""
    outcome = FixOutcome(source)
    diagnostics = check_source(source, filename, codes, project=project)
    for iteration in range(MAX_ITERATIONS):
        candidates = [d for d in diagnostics if applicable(d, unsafe, unfixable)]
        if allowed is not None:
            candidates = [d for d in candidates if iteration == 0 and (d.code, d.location.row, d.location.column) in allowed]
        if not candidates:
            outcome.remaining = diagnostics
            return outcome
        new_source, applied = apply_fixes(outcome.source, [d.fix for d in candidates])
        try:
            cst.parse_module(new_source)
        except cst.ParserSyntaxError as error:
            outcome.remaining = diagnostics
            outcome.error = f"a fix produced code that does not parse ({error.message}); the file was left as it was before that fix"
            return outcome
        outcome.fixed.extend(candidates[i] for i in applied)
        outcome.source = new_source
        diagnostics = check_source(new_source, filename, codes, project=project)
    outcome.remaining = diagnostics
    outcome.error = f"fixes did not converge after {MAX_ITERATIONS} iterations"
    return outcome


__all__ = ["Edit", "FixOutcome", "apply_fixes", "applicable", "fix_source", "mark_unfixable"]
