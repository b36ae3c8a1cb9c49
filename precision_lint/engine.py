"""Checks one source text: prefilter, parse once, build the model (asking the
project index about other modules), run the enabled rules in one pass over it,
place and suppress the findings, and summarize the module for the index."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from . import speedups
from .conditions import resolve
from .diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity
from .failures import internal_error
from .kept_trees import KeptTrees
from .model.evidence import collect_evidence
from .model.semantic import SemanticModel, build_model
from .model.summaries import Evidence, ProjectFacts
from .parsing import parse_module
from .positions import NotLocal, SourcePositions, StatementPositions, forget_positions, positions_for
from .project.index import ModuleContext
from .project.modules import ModuleIdentity, identify
from .project.exports import exports_summary
from .project.summary import summarize
from .quick_tree import QuickTree, quick_module
from .registry import all_rules
from .rule import Finding, NodeEdit, Rule
from .source import LineIndex
from .suppression import may_name_our_codes, noqa_by_line

# A file with none of these cannot create a torch tensor, count with one, make an
# int32 NumPy total or show the precision the model runs in (`model.bfloat16()`, an
# fp16 setting), so it cannot hold a hazard or evidence: it is not parsed (only its
# imports are read, for the project index).
_MAY_HOLD_HAZARD = re.compile(
    r"torch|\.sum\(|count_nonzero|bincount|numel|register_buffer|add_state|int32|intc"
    r"|bfloat16|float16|\.half\(|Float16Module|MixedPrecision|autocast|GradScaler|bf16|fp16|precision="
)


@dataclass
class ModuleResult:
    diagnostics: list[Diagnostic]
    # the module parsed (None: not parsed), for the fixer to go on from
    module: cst.Module | None = None
    # the module's summary for the project index (None: nothing to summarize)
    summary: dict | None = None
    # what the model asked the project index, and what each answer was worth
    dependencies: dict[str, str] = field(default_factory=dict)
    # what this module and the project slice show about the model's precision
    facts: ProjectFacts = field(default_factory=ProjectFacts)


def needs_parse(source: str, codes: frozenset[str], summary_only: bool = False, called: bool = False) -> bool:
    """Whether checking `source` with `codes` parses it at all (the prefilter): the
    input limits apply only to files that are parsed. `called`: the project's code
    calls into the module, which is modeled for its summary whatever its words."""
    if called:
        return True
    rules = [rule for rule in all_rules() if rule.code in codes]
    wants_model = summary_only or any(not rule.checks_suppressions for rule in rules)
    model = wants_model and bool(_MAY_HOLD_HAZARD.search(source))
    return model or (any(rule.checks_suppressions for rule in rules) and "noqa" in source)


def check_source(
    source: str,
    filename: str,
    codes: frozenset[str],
    identity: ModuleIdentity | None = None,
    project: dict | None = None,
) -> list[Diagnostic]:
    """The findings for one source text, settled by what this module and the project
    slice show about the model's precision. `identity` names the module (default:
    from the file's path); `project` is the slice of the project index it may ask.
    A crash in the model or in a rule becomes an internal-error diagnostic for this
    file (the other rules still run): one bug must not hide the rest of the run."""
    try:
        result = check_module(source, filename, codes, identity, project)
        return resolve(result.diagnostics, result.facts)
    finally:
        forget_positions()  # the tree is done with


def check_module(
    source: str,
    filename: str,
    codes: frozenset[str],
    identity: ModuleIdentity | None = None,
    project: dict | None = None,
    summary_only: bool = False,
    called: bool = False,
    try_quick: bool = True,
    kept: KeptTrees | None = None,
) -> ModuleResult:
    """Unsettled findings (see conditions.py), the module's summary and what it asked
    the project. `summary_only`: build the model for the summary, run no rule;
    `called`: do so even without the prefilter's words (see needs_parse); `try_quick`:
    model it on the quick tree first (False where findings are expected); `kept`:
    the trees of the worker's earlier checks, which this one starts from and adds to."""
    identity = identity or identify(filename)
    if not needs_parse(source, codes, summary_only, called):
        return ModuleResult([], summary=exports_summary(source, identity.name, identity.package, filename))
    if "\0" in source:  # Python refuses the file; libcst would parse it (and the model trip on it)
        return ModuleResult([syntax_error(filename, source, None)])
    kind, tree = (kept.get(filename, source) if kept is not None else None) or (None, None)
    if kind == "concrete":  # it had something to report, or has no quick tree
        return check_parsed(source, tree, filename, codes, identity, project, summary_only, called)
    quick = None
    if try_quick and speedups.enabled("quick"):
        quick = tree if kind == "quick" else quick_module(source)
    if quick is not None:  # most modules end with nothing to report: model them on the quick tree
        if kept is not None:
            kept.settle()
        try:
            result = check_parsed(source, quick.module, filename, codes, identity, project, summary_only, called, quick)
        except _NeedsConcreteTree:
            pass  # something to report: parse with libcst, where findings are placed
        else:
            if kept is not None:
                kept.keep(filename, source, "quick", quick)
            return result
        quick = None  # the first pass's tree and model go now
        if kept is not None:
            kept.drop_garbage()
    try:
        module = parse_module(source)  # a long module in pieces (parsing.py)
    except cst.ParserSyntaxError as error:
        return ModuleResult([syntax_error(filename, source, error)])
    except Exception as error:  # libcst's own failures (a RecursionError, a panic)
        return ModuleResult([internal_error(filename, "the parser (libcst)", error)])
    if kept is not None:
        kept.keep(filename, source, "concrete", module)
        kept.settle()
    return check_parsed(source, module, filename, codes, identity, project, summary_only, called)


def check_parsed(
    source: str,
    module: cst.Module,
    filename: str,
    codes: frozenset[str],
    identity: ModuleIdentity | None = None,
    project: dict | None = None,
    summary_only: bool = False,
    called: bool = False,
    quick: QuickTree | None = None,
) -> ModuleResult:
    """check_module for a source already parsed into `module`. With `quick`, `module`
    is its quick tree, and anything to report raises _NeedsConcreteTree."""
    identity = identity or identify(filename)
    rules = [rule for rule in all_rules() if rule.code in codes and not summary_only]
    model_rules = [rule for rule in rules if not rule.checks_suppressions]
    suppression_rules = [rule for rule in rules if rule.checks_suppressions]
    result = ModuleResult([], None if quick else module)
    found: list[Diagnostic] = []
    failed: list[Diagnostic] = []
    if (model_rules or summary_only) and (called or _MAY_HOLD_HAZARD.search(source)):
        found, failed = _model_diagnostics(module, source, filename, model_rules, identity, project, result, quick)
    # without findings, only a directive naming one of our codes can be reported (unused)
    directives = noqa_by_line(source) if found or (suppression_rules and may_name_our_codes(source)) else {}
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
    result.diagnostics = sorted(kept + failed, key=Diagnostic.sort_key)
    if quick is not None and result.diagnostics:
        raise _NeedsConcreteTree
    return result


class _NeedsConcreteTree(Exception):
    """The quick tree's model has something to report (or failed): findings are
    placed in, and their fixes edit, the tree libcst parses."""


def _rule_label(rule: type[Rule]) -> str:
    return f"rule {rule.code} ({rule.name})"


def _model_diagnostics(
    module: cst.Module,
    source: str,
    filename: str,
    rules: list[type[Rule]],
    identity: ModuleIdentity,
    project: dict | None,
    result: ModuleResult,
    quick: QuickTree | None = None,
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(findings, internal errors); the module's summary, dependencies and evidence
    go into `result`."""
    context = ModuleContext(project)
    code_of = module.code_for_node if quick is None else _quick_code(quick)
    try:
        named = quick.attributes_named if quick is not None else None
        model = build_model(module, identity.name, context, identity.package, named)
        _summarize(model, source, filename, context, result, code_of)
    except _NeedsConcreteTree:
        raise
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
    if quick is not None:
        raise _NeedsConcreteTree
    try:
        try:
            placed, unplaced = _place(_Placer(positions_for(module, source)), findings, filename)
        except NotLocal:  # a statement libcst does not reproduce: the whole-module pass
            placed, unplaced = _place(_Placer(SourcePositions(module, source)), findings, filename)
    except Exception as error:
        return [], [*failed, internal_error(filename, "placing the findings", error)]
    return placed, failed + unplaced


def _place(placer: "_Placer", findings: list[tuple[type[Rule], Finding]], filename: str) -> tuple[list[Diagnostic], list[Diagnostic]]:
    placed, failed = [], []
    for rule, finding in findings:
        try:
            placed.append(placer.diagnostic(rule, finding, filename))
        except NotLocal:
            raise
        except Exception as error:
            failed.append(internal_error(filename, _rule_label(rule), error))
    return placed, failed


def _quick_code(quick: QuickTree) -> Callable[[cst.CSTNode], str]:
    def code_of(node: cst.CSTNode) -> str:
        code = quick.code_of_call(node) if isinstance(node, cst.Call) else None
        if code is None:
            raise _NeedsConcreteTree
        return code

    return code_of


def _summarize(
    model: SemanticModel,
    source: str,
    filename: str,
    context: ModuleContext,
    result: ModuleResult,
    code_of: Callable[[cst.CSTNode], str],
) -> None:
    """`code_of`: a node's code as the concrete tree gives it (evidence names it)."""
    codes = [(kind, code_of(node)) for kind, node in collect_evidence(model)]
    own = [Evidence(kind, _snippet(code), f"{filename}:{line_of(source, code)}") for kind, code in codes]
    result.summary = summarize(model, filename, source, own)
    result.dependencies = context.asked
    result.facts = ProjectFacts(own + context.facts().evidence)


def _snippet(code: str) -> str:
    text = " ".join(code.split())
    return text if len(text) <= 60 else text[:57] + "..."


def line_of(source: str, code: str) -> int:
    """The line where a node's `code` starts, found in the text: cheap for the few
    nodes that need a line without a position pass (evidence). A line of the code that
    holds only its own opening parentheses is passed over: `(` is on many lines."""
    lines = [line.strip() for line in code.splitlines()]
    first = next((line for line in lines if line.strip("(")), "")
    for number, line in enumerate(source.splitlines(), start=1):
        if first and first in line:
            return number
    return 1


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
    computed for files that have findings, for the statements that hold them."""

    def __init__(self, positions: SourcePositions | StatementPositions) -> None:
        self.positions = positions

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
            conditions=finding.conditions,
        )
