"""Applies fixes until nothing changes: apply non-overlapping edits, re-parse, guard,
re-check, repeat. Never returns source that does not parse, and never source that a
fix changed outside its edits: such a fix is refused and reported as an internal error
naming its rule, and the other fixes still apply."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from .diagnostics import Applicability, Diagnostic, Edit, Fix
from .conditions import resolve
from .engine import check_module, check_parsed
from .project.modules import identify
from .failures import INTERNAL_ERROR, REPORT_HINT, failure, is_failure
from .fix_guard import check_edits
from .parsing import parse_module
from .positions import forget_positions
from .registry import rule_by_code_or_name
from .source import LineIndex, splice

MAX_ITERATIONS = 100

Piece = tuple[int, int, str]


@dataclass
class FixOutcome:
    source: str
    fixed: list[Diagnostic] = field(default_factory=list)
    # What is left: findings without an applied fix, and the internal errors (a refused
    # fix, fixes that did not converge) as failure diagnostics.
    remaining: list[Diagnostic] = field(default_factory=list)
    # The findings in the source as given, before any fix: what stands when the fixed
    # text cannot be written.
    initial: list[Diagnostic] = field(default_factory=list)
    # The first internal error's message, None when every chosen fix applied cleanly.
    error: str | None = None
    # The source as given, for the project index: its module summary and what it asked
    summary: dict | None = None
    dependencies: dict[str, str] = field(default_factory=dict)


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


def plan_fixes(source: str, fixes: list[Fix]) -> tuple[list[Piece], list[int]]:
    """The (start, end, content) pieces of the whole fixes whose edits do not overlap an
    earlier one's, and the indexes of those fixes. Identical edits (two fixes adding
    the same import) are applied once."""
    index = LineIndex(source)
    taken: list[Piece] = []
    applied: list[int] = []
    for number, fix in enumerate(fixes):
        spans = [_piece(index, e) for e in fix.edits]
        new = [span for span in spans if span not in taken]
        if any(_overlaps(span, other) for span in new for other in taken):
            continue
        taken.extend(new)
        applied.append(number)
    return taken, applied


def apply_fixes(source: str, fixes: list[Fix]) -> tuple[str, list[int]]:
    pieces, applied = plan_fixes(source, fixes)
    return splice(source, pieces), applied


def _piece(index: LineIndex, edit: Edit) -> Piece:
    start = index.offset(edit.location.row, edit.location.column)
    end = index.offset(edit.end_location.row, edit.end_location.column)
    return start, end, edit.content


def _overlaps(a: Piece, b: Piece) -> bool:
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
    try:
        return _fix(source, filename, codes, unsafe, unfixable, allowed, project)
    finally:
        forget_positions()  # the trees are done with


def _settled(result) -> list[Diagnostic]:
    return resolve(result.diagnostics, result.facts)


def _fix(source, filename, codes, unsafe, unfixable, allowed, project) -> FixOutcome:
    outcome = FixOutcome(source)
    identity = identify(filename)
    first = check_module(source, filename, codes, identity, project)
    diagnostics, module = _settled(first), first.module
    outcome.summary, outcome.dependencies = first.summary, first.dependencies
    outcome.initial = diagnostics
    failures: list[Diagnostic] = []
    refused: set[tuple] = set()
    for iteration in range(MAX_ITERATIONS):
        candidates = [d for d in diagnostics if applicable(d, unsafe, unfixable)]
        if allowed is not None:
            candidates = [d for d in candidates if iteration == 0 and (d.code, d.location.row, d.location.column) in allowed]
        index = LineIndex(outcome.source)
        candidates = [d for d in candidates if _identity(d, index) not in refused]
        if not candidates:
            break
        if module is None:  # a fix needs a finding, and a finding a parsed module
            break
        pieces, applied = plan_fixes(outcome.source, [d.fix for d in candidates])
        new_source, new_module, problem = _try(outcome.source, module, pieces)
        if problem is not None:
            # Find the fixes at fault, each tried alone; refuse them, retry the rest.
            chosen = [candidates[i] for i in applied]
            at_fault = [(d, p) for d in chosen if (p := _try(outcome.source, module, plan_fixes(outcome.source, [d.fix])[0])[2])]
            for diagnostic, reason in at_fault or [(d, problem) for d in chosen]:
                refused.add(_identity(diagnostic, index))
                failures.append(_refusal(diagnostic, reason, filename))
            continue
        outcome.fixed.extend(candidates[i] for i in applied)
        outcome.source, module = new_source, new_module
        diagnostics = _settled(check_parsed(new_source, new_module, filename, codes, identity, project))
    else:
        rules = sorted({d.code or "" for d in diagnostics if applicable(d, unsafe, unfixable)})
        failures.append(
            failure(INTERNAL_ERROR, filename, f"Internal error: the fixes of {', '.join(rules)} did not converge after {MAX_ITERATIONS} rounds; the file holds the fixes of the first {MAX_ITERATIONS}", note=REPORT_HINT)
        )
    outcome.remaining = diagnostics + failures
    outcome.error = failures[0].message if failures else next((d.message for d in diagnostics if is_failure(d)), None)
    return outcome


def _try(source: str, module: cst.Module, pieces: list[Piece]) -> tuple[str, cst.Module | None, str | None]:
    """(new source, its module, None) or (…, None, what is wrong with the edits)."""
    new_source = splice(source, pieces)
    try:
        new_module = parse_module(new_source)  # as the engine parses (parsing.py)
    except cst.ParserSyntaxError as error:
        return new_source, None, f"it produces code that does not parse ({str(error.message).strip().splitlines()[0]})"
    problem = check_edits(source, module, new_module, pieces)
    return new_source, (None if problem else new_module), (f"it changes code outside its edits: {problem}" if problem else None)


def _identity(diagnostic: Diagnostic, index: LineIndex) -> tuple:
    """The same refused fix in a later round: its rule, its edits and the text they
    replace (positions move as other fixes apply)."""
    fix = diagnostic.fix
    edits = tuple((e.content, index.text[_piece(index, e)[0] : _piece(index, e)[1]]) for e in fix.edits) if fix else ()
    return diagnostic.code, fix.message if fix else "", edits


def _refusal(diagnostic: Diagnostic, reason: str, filename: str) -> Diagnostic:
    rule = rule_by_code_or_name(diagnostic.code or "")
    label = f"{diagnostic.code} ({rule.name})" if rule else str(diagnostic.code)
    return failure(
        INTERNAL_ERROR,
        filename,
        f"Internal error in rule {label}: its fix was refused, {reason}; the finding is reported unfixed",
        diagnostic.location,
        note=REPORT_HINT,
    )


__all__ = ["Edit", "FixOutcome", "apply_fixes", "applicable", "fix_source", "mark_unfixable", "plan_fixes"]
