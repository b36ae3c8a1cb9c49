"""Checks one source text: prefilter, parse once, build the model, run the
enabled rules in one pass over it, place and suppress the findings."""
from __future__ import annotations

import ast
import re

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity
from .model.semantic import build_model
from .registry import all_rules
from .rule import Finding, NodeEdit, Rule
from .suppression import noqa_by_line

# A file with none of these cannot create a torch tensor or count with one, so it
# cannot hold a hazard: it is skipped before parsing.
_MAY_HOLD_HAZARD = re.compile(r"torch|\.sum\(|count_nonzero|bincount|numel|register_buffer|add_state")


def check_source(source: str, filename: str, codes: frozenset[str]) -> list[Diagnostic]:
    rules = [rule for rule in all_rules() if rule.code in codes]
    model_rules = [rule for rule in rules if not rule.checks_suppressions]
    suppression_rules = [rule for rule in rules if rule.checks_suppressions]
    may_hold = bool(_MAY_HOLD_HAZARD.search(source))
    if not (model_rules and may_hold) and not (suppression_rules and "noqa" in source):
        return []
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return [syntax_error(filename, source, error)]
    found = _model_diagnostics(module, filename, model_rules) if may_hold else []
    directives = noqa_by_line(source)
    kept: list[Diagnostic] = []
    used: dict[int, set[str]] = {}
    for diagnostic in found:
        directive = directives.get(diagnostic.noqa_row)
        if directive is not None and directive.suppresses(diagnostic.code):
            used.setdefault(diagnostic.noqa_row, set()).add(diagnostic.code or "")
        else:
            kept.append(diagnostic)
    for rule in suppression_rules:
        kept.extend(rule.check_suppressions(source, filename, directives, used))
    return sorted(kept, key=Diagnostic.sort_key)


def _model_diagnostics(module: cst.Module, filename: str, rules: list[type[Rule]]) -> list[Diagnostic]:
    model = build_model(module)
    findings: list[tuple[type[Rule], Finding]] = []
    for rule in rules:
        findings.extend((rule, finding) for finding in rule().check(model))
    if not findings:
        return []
    placer = _Placer(module)
    return [placer.diagnostic(rule, finding, filename) for rule, finding in findings]


def syntax_error(filename: str, source: str, error: cst.ParserSyntaxError) -> Diagnostic:
    # libcst's reported position can be off by a line; Python's compiler names the
    # offending line. Fall back to libcst's when Python accepts the code.
    location = Location(error.raw_line, error.raw_column + 1)
    message = str(error.message).strip().splitlines()[0] if error.message else "invalid syntax"
    try:
        compile(source, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as python_error:
        if python_error.lineno:
            location = Location(python_error.lineno, max(python_error.offset or 1, 1))
            message = python_error.msg
    except (ValueError, OverflowError):
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

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def span(self, node: cst.CSTNode) -> tuple[Location, Location]:
        code_range = self.positions[node]
        return (
            Location(code_range.start.line, code_range.start.column + 1),
            Location(code_range.end.line, code_range.end.column + 1),
        )

    def edit(self, edit: NodeEdit) -> Edit:
        start, end = self.span(edit.node)
        if edit.where == "line_start":
            start = end = Location(start.row, 1)
        elif edit.where == "after":
            start = end
            if edit.until is not None:
                end = self.span(edit.until)[1]
        elif edit.until is not None:
            end = self.span(edit.until)[0]
        return Edit(edit.content, start, end)

    def diagnostic(self, rule: type[Rule], finding: Finding, filename: str) -> Diagnostic:
        start, end = self.span(finding.node)
        fix = None
        if finding.fix is not None:
            edits = tuple(sorted({self.edit(e) for e in finding.fix.edits}, key=lambda e: (e.location, e.end_location)))
            fix = Fix(finding.fix.applicability, finding.fix.message, edits)
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
            note=finding.note,
        )
