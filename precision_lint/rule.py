"""The contract between the engine and a rule module in `rules/`.

A rule reads the semantic model and yields Findings that point at CST nodes; the
engine turns nodes into positions, applies suppressions and renders output. Rules
never parse, read files or print.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import ClassVar, Iterable

import libcst as cst

from .catalog import FixAvailability  # defined there, so reading rule metadata needs no libcst
from .diagnostics import Applicability, Severity
from .model.semantic import SemanticModel


@dataclass(frozen=True)
class NodeEdit:
    """Replace `node`'s source with `content`; or, with `where`, insert `content` at
    the start of the line where `node` begins ("line_start") or right after the
    node ("after"). Small edits keep the user's formatting around them."""

    node: cst.CSTNode
    content: str
    where: str = "replace"
    # With `until`: replace from `node`'s start to `until`'s start ("replace"), or from
    # `node`'s end to `until`'s end ("after"): how an argument and its comma go.
    until: cst.CSTNode | None = None


@dataclass(frozen=True)
class NodeFix:
    applicability: Applicability
    message: str
    edits: tuple[NodeEdit, ...]


@dataclass(frozen=True)
class Finding:
    node: cst.CSTNode
    message: str
    severity: Severity
    fix: NodeFix | None = None
    related: tuple[tuple[cst.CSTNode, str], ...] = ()
    note: str | None = None
    # how the project's precision settings bear on the finding (see conditions.py):
    # RUNTIME ("the model's dtype": raised to an error by half precision), CAST (a
    # float buffer a whole-model cast lowers), DEFAULT (made in the default dtype),
    # needs("autocast") (kept only when the project uses autocast)
    conditions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; `fixed` is the source after `--fix --unsafe-fixes`
    (None: the rule offers no fix here)."""

    code: str
    fixed: str | None = None
    applicability: Applicability | None = None
    # the finding's severity, where the example shows how the project settles it
    severity: Severity | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    # The severity most of its findings have (SARIF's default level); a finding may differ.
    default_severity: ClassVar[Severity] = Severity.ERROR
    # A rule about suppressions themselves (PH100) runs after the others, on the
    # noqa directives, instead of on the model.
    checks_suppressions: ClassVar[bool] = False
    # Other rules its examples need enabled (PH100 judges PH001's suppressions).
    example_codes: ClassVar[tuple[str, ...]] = ()
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def check(self, model: SemanticModel) -> Iterable[Finding]:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def documentation(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()
