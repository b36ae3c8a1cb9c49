"""Checks one source text: prefilter, parse once, build the model, run the
enabled rules in one pass over it, place and suppress the findings."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity
from .model.semantic import SemanticModel, build_model
from .conditions import resolve
from .model.evidence import collect_evidence
from .model.summaries import Evidence, ProjectFacts
from .project.index import ModuleContext
from .project.modules import ModuleIdentity, identify
from .project.summary import exports_summary, summarize
from .registry import all_rules
from .rule import Finding, NodeEdit, Rule
from .suppression import noqa_by_line

# A file with none of these cannot create a torch tensor, count with one or make an
# int32 NumPy total, so it cannot hold a hazard: it is not parsed (only its imports
# are read, for the project index).
_MAY_HOLD_HAZARD = re.compile(r"torch|\.sum\(|count_nonzero|bincount|numel|register_buffer|add_state|int32|intc")


@dataclass
class ModuleResult:
    diagnostics: list[Diagnostic]
    # the module's summary for the project index (None: not parsed or no model)
    summary: dict | None = None
    # what the model asked the project index, and what each answer was worth
    dependencies: dict[str, str] = field(default_factory=dict)
    # what this module and the project slice show about the model's precision
    facts: ProjectFacts = field(default_factory=ProjectFacts)


def check_source(
    source: str,
    filename: str,
    codes: frozenset[str],
    identity: ModuleIdentity | None = None,
    project: dict | None = None,
) -> list[Diagnostic]:
    """The diagnostics of one file. `identity` names the module (default: from the
    file's path); `project` is the slice of the project index it may ask."""
    result = check_module(source, filename, codes, identity, project)
    return resolve(result.diagnostics, result.facts)


def check_module(
    source: str,
    filename: str,
    codes: frozenset[str],
    identity: ModuleIdentity | None = None,
    project: dict | None = None,
    summary_only: bool = False,
) -> ModuleResult:
    """`summary_only`: build the model for the module's summary, run no rule."""
    rules = [rule for rule in all_rules() if rule.code in codes and not summary_only]
    model_rules = [rule for rule in rules if not rule.checks_suppressions]
    suppression_rules = [rule for rule in rules if rule.checks_suppressions]
    may_hold = bool(_MAY_HOLD_HAZARD.search(source))
    if not ((model_rules or summary_only) and may_hold) and not (suppression_rules and "noqa" in source):
        identity = identity or identify(filename)
        return ModuleResult([], exports_summary(source, identity.name, identity.package, filename))
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return ModuleResult([syntax_error(filename, source, error)])
    result = ModuleResult([])
    found: list[Diagnostic] = []
    if may_hold and (model_rules or summary_only):
        identity = identity or identify(filename)
        context = ModuleContext(project)
        model = build_model(module, identity.name, context, identity.package)
        found = _rule_diagnostics(model, filename, model_rules)
        own = [Evidence(kind, _snippet(module, node), f"{filename}:{line_of(source, module, node)}") for kind, node in collect_evidence(model)]
        result.summary = summarize(model, filename, source, own)
        result.dependencies = context.asked
        result.facts = ProjectFacts(own + context.facts().evidence)
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
    result.diagnostics = sorted(kept, key=Diagnostic.sort_key)
    return result


def _rule_diagnostics(model: SemanticModel, filename: str, rules: list[type[Rule]]) -> list[Diagnostic]:
    module = model.module
    findings: list[tuple[type[Rule], Finding]] = []
    for rule in rules:
        findings.extend((rule, finding) for finding in rule().check(model))
    if not findings:
        return []
    placer = _Placer(module)
    return [placer.diagnostic(rule, finding, filename) for rule, finding in findings]


def _snippet(module: cst.Module, node: cst.CSTNode) -> str:
    text = " ".join(module.code_for_node(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def line_of(source: str, module: cst.Module, node: cst.CSTNode) -> int:
    """The line where `node`'s code starts, found in the text: cheap for the few
    nodes that need a line without a position pass (evidence)."""
    first = module.code_for_node(node).strip().splitlines()[0] if module.code_for_node(node).strip() else ""
    for number, line in enumerate(source.splitlines(), start=1):
        if first and first in line:
            return number
    return 1


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
            conditions=finding.conditions,
        )
