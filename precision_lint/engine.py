"""Checks one source text: prefilter, parse once, build the model, run the
enabled rules in one pass over it, place and suppress the findings."""
from __future__ import annotations

import ast
import re

import libcst as cst

from .diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity
from .failures import internal_error
from .model.semantic import build_model
from .positions import SourcePositions, forget_positions
from .registry import all_rules
from .rule import Finding, NodeEdit, Rule
from .source import LineIndex
from .suppression import noqa_by_line

# A file with none of these cannot create a torch tensor or count with one, so it
# cannot hold a hazard: it is skipped before parsing.
_MAY_HOLD_HAZARD = re.compile(r"torch|\.sum\(|count_nonzero|bincount|numel|register_buffer|add_state")


def needs_parse(source: str, codes: frozenset[str]) -> bool:
    """Whether checking `source` with `codes` parses it at all (the prefilter): the
    input limits apply only to files that are parsed."""
    rules = [rule for rule in all_rules() if rule.code in codes]
    model = any(not rule.checks_suppressions for rule in rules) and bool(_MAY_HOLD_HAZARD.search(source))
    return model or (any(rule.checks_suppressions for rule in rules) and "noqa" in source)


def check_source(source: str, filename: str, codes: frozenset[str]) -> list[Diagnostic]:
    """The findings for one source text. A crash in the model or in a rule becomes an
    internal-error diagnostic for this file (the other rules still run) instead of an
    exception: one bug must not hide the rest of the run."""
    try:
        return parse_and_check(source, filename, codes)[0]
    finally:
        forget_positions()  # the tree is done with


def parse_and_check(source: str, filename: str, codes: frozenset[str]) -> tuple[list[Diagnostic], cst.Module | None]:
    """check_source, and the module it parsed (None when it parsed none): the fixer
    goes on from it instead of parsing again."""
    if not needs_parse(source, codes):
        return [], None
    if "\0" in source:  # Python refuses the file; libcst would parse it (and the model trip on it)
        return [syntax_error(filename, source, None)], None
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return [syntax_error(filename, source, error)], None
    except Exception as error:  # libcst's own failures (a RecursionError, a panic)
        return [internal_error(filename, "the parser (libcst)", error)], None
    return check_parsed(source, module, filename, codes), module


def check_parsed(source: str, module: cst.Module, filename: str, codes: frozenset[str]) -> list[Diagnostic]:
    """check_source for a source already parsed into `module`."""
    rules = [rule for rule in all_rules() if rule.code in codes]
    model_rules = [rule for rule in rules if not rule.checks_suppressions]
    suppression_rules = [rule for rule in rules if rule.checks_suppressions]
    may_hold = bool(model_rules) and bool(_MAY_HOLD_HAZARD.search(source))
    found, failed = _model_diagnostics(module, source, filename, model_rules) if may_hold else ([], [])
    directives = noqa_by_line(source) if suppression_rules or found else {}
    kept: list[Diagnostic] = []
    used: dict[int, set[str]] = {}
    for diagnostic in found:
        directive = directives.get(diagnostic.noqa_row)
        if directive is not None and directive.suppresses(diagnostic.code):
            used.setdefault(diagnostic.noqa_row, set()).add(diagnostic.code or "")
        else:
            kept.append(diagnostic)
    # With a failure, a suppression looks unused because its finding is missing: judging
    # (and removing) it would be wrong, so the suppression rules wait for a clean run.
    for rule in suppression_rules if not failed else ():
        try:
            kept.extend(rule.check_suppressions(source, filename, directives, used))
        except Exception as error:
            failed.append(internal_error(filename, _rule_label(rule), error))
    return sorted(kept + failed, key=Diagnostic.sort_key)


def _rule_label(rule: type[Rule]) -> str:
    return f"rule {rule.code} ({rule.name})"


def _model_diagnostics(
    module: cst.Module, source: str, filename: str, rules: list[type[Rule]]
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(findings, internal errors)."""
    try:
        model = build_model(module)
    except Exception as error:
        return [], [internal_error(filename, "the semantic model", error)]
    findings: list[tuple[type[Rule], Finding]] = []
    failed: list[Diagnostic] = []
    for rule in rules:
        try:
            findings.extend((rule, finding) for finding in rule().check(model))
        except Exception as error:
            failed.append(internal_error(filename, _rule_label(rule), error))
    if not findings:
        return [], failed
    try:
        placer = _Placer(module, source)
    except Exception as error:
        return [], [*failed, internal_error(filename, "placing the findings", error)]
    placed = []
    for rule, finding in findings:
        try:
            placed.append(placer.diagnostic(rule, finding, filename))
        except Exception as error:
            failed.append(internal_error(filename, _rule_label(rule), error))
    return placed, failed


def syntax_error(filename: str, source: str, error: cst.ParserSyntaxError | None) -> Diagnostic:
    # libcst's reported position can be off by a line; Python's compiler names the
    # offending line. Fall back to libcst's when Python accepts the code.
    location = Location(error.raw_line, error.raw_column + 1) if error else Location(1, 1)
    message = str(error.message).strip().splitlines()[0] if error and error.message else "invalid syntax"
    nul = source.find("\0")
    if nul >= 0:  # Python refuses the whole file without saying where
        index = LineIndex(source)
        row = index.row_of(nul)
        location, message = Location(row, nul - index.starts[row - 1] + 1), "source code cannot contain a NUL byte"
    else:
        try:
            compile(source, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as python_error:
            if python_error.lineno:
                location = Location(python_error.lineno, max(python_error.offset or 1, 1))
                message = python_error.msg
        except (ValueError, OverflowError, RecursionError, MemoryError):
            pass
    return Diagnostic(
        code=None,
        name="syntax-error",
        message=f"SyntaxError: {message}",
        severity=Severity.ERROR,
        filename=filename,
        location=location,
        end_location=location,
    )


class _Placer:
    """Turns node-based findings into positioned diagnostics. Positions are only
    computed for files that have findings (it costs a pass over the module)."""

    def __init__(self, module: cst.Module, source: str) -> None:
        self.positions = SourcePositions(module, source)

    def span(self, node: cst.CSTNode) -> tuple[Location, Location]:
        return self.positions.approximate_span(node)

    def edit(self, edit: NodeEdit) -> Edit | None:
        """None when the edit's line cannot be placed exactly in the source."""
        here = self.positions.span(edit.node)
        until = None if edit.until is None else self.positions.span(edit.until)
        if here is None or (edit.until is not None and until is None):
            return None
        start, end = here
        if edit.where == "line_start":
            start = end = Location(start.row, 1)
        elif edit.where == "after":
            start = end
            if until is not None:
                end = until[1]
        elif until is not None:
            end = until[0]
        return Edit(edit.content, start, end)

    def diagnostic(self, rule: type[Rule], finding: Finding, filename: str) -> Diagnostic:
        start, end = self.span(finding.node)
        fix, note = None, finding.note
        if finding.fix is not None:
            edits = [self.edit(e) for e in finding.fix.edits]
            if any(e is None for e in edits):
                note = "no fix offered: libcst does not reproduce this line of the source exactly"
            else:
                ordered = tuple(sorted(set(edits), key=lambda e: (e.location, e.end_location)))
                fix = Fix(finding.fix.applicability, finding.fix.message, ordered)
        related = tuple(Related(message, *self.span(node)) for node, message in finding.related)
        return Diagnostic(
            code=rule.code,
            name=rule.name,
            message=finding.message,
            severity=finding.severity,
            filename=filename,
            location=start,
            end_location=end,
            fix=fix,
            related=related,
            note=note,
        )
