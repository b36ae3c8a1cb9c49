"""Findings whose weight depends on how the project runs its model, settled once the
project's evidence is known (model/evidence.py gathers it from every module):

- RUNTIME: the dtype is the model's run-time one. A warning; an error, naming the
  line, when the project runs in half precision (a whole-model cast, or a bfloat16
  or float16 default dtype).
- CAST: a float32 buffer or metric state; the message names the line that casts
  the model to half precision, where the project has one.
- DEFAULT: made in the default dtype. An error naming the line when the project
  makes the default bfloat16/float16 anywhere; dropped when it makes it float64 and
  never narrower, in code that is not a test (a test that sets float64 for itself
  says nothing of how the library's users run it, so it cannot remove a finding).
- needs(kind): kept only when the project shows that kind of evidence (autocast,
  half), and then an error naming it.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from .diagnostics import Diagnostic, Severity
from .model.evidence import AUTOCAST, DEFAULT_DOUBLE, DEFAULT_HALF, HALF
from .model.summaries import Evidence, ProjectFacts

RUNTIME = "runtime"
CAST = "cast"
DEFAULT = "default"
_NEEDS = "needs:"


def needs(kind: str) -> str:
    return _NEEDS + kind


def resolve(diagnostics: list[Diagnostic], facts: ProjectFacts) -> list[Diagnostic]:
    resolved = []
    for diagnostic in diagnostics:
        settled = _settle(diagnostic, facts) if diagnostic.conditions else diagnostic
        if settled is not None:
            resolved.append(settled)
    return resolved


def _settle(diagnostic: Diagnostic, facts: ProjectFacts) -> Diagnostic | None:
    message, severity = diagnostic.message, diagnostic.severity
    half = facts.first(HALF) or facts.first(DEFAULT_HALF)
    for condition in diagnostic.conditions:
        if condition.startswith(_NEEDS):
            seen = facts.first(condition[len(_NEEDS) :])
            if seen is None:
                return None
            message, severity = f"{message} ({_shown(seen)})", Severity.ERROR
        elif condition == RUNTIME and half is not None:
            message, severity = f"{message}; the project runs its model in half precision ({_shown(half)})", Severity.ERROR
        elif condition == CAST and facts.first(HALF) is not None:
            message += f"; {_shown(facts.first(HALF))} casts it to half precision, exact only up to 2,048 (float16) or 256 (bfloat16)"
        elif condition == DEFAULT:
            default_half = facts.first(DEFAULT_HALF)
            if default_half is None and any(e.kind == DEFAULT_DOUBLE and not _in_tests(e) for e in facts.evidence):
                return None  # the program's default dtype is float64: exact to 2^53
            if default_half is not None:
                message = f"{message}; the project sets the default dtype to half precision ({_shown(default_half)}), exact only up to 256 (bfloat16) or 2,048 (float16)"
                severity = Severity.ERROR
    return replace(diagnostic, message=message, severity=severity, conditions=())


def _in_tests(evidence: Evidence) -> bool:
    """Whether the evidence sits in a test module, as pytest finds them: under a
    `test`/`tests` folder, or in `test_*.py`, `*_test.py` or `conftest.py`."""
    path = PurePosixPath(evidence.where.rpartition(":")[0].replace("\\", "/"))
    name = path.name
    return (
        any(part in ("test", "tests") for part in path.parts[:-1])
        or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
    )  # fmt: skip


def _shown(evidence: Evidence) -> str:
    return f"`{evidence.text}` at {evidence.where}"


__all__ = ["AUTOCAST", "CAST", "DEFAULT", "HALF", "RUNTIME", "needs", "resolve"]
