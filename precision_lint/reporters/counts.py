"""How many errors and warnings: one wording for the terminal summary, markdown and
the job summary, so no two formats can disagree about a run."""
from __future__ import annotations

from typing import Iterable

from ..diagnostics import Diagnostic, Severity


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def severity_counts(diagnostics: Iterable[Diagnostic]) -> tuple[int, int]:
    """(errors, warnings)."""
    errors = warnings = 0
    for diagnostic in diagnostics:
        if diagnostic.severity is Severity.ERROR:
            errors += 1
        else:
            warnings += 1
    return errors, warnings


def errors_and_warnings(diagnostics: Iterable[Diagnostic]) -> str:
    """"2 errors and 7 warnings", "1 error", "3 warnings" (never "0 warnings")."""
    errors, warnings = severity_counts(diagnostics)
    parts = [plural(n, noun) for n, noun in ((errors, "error"), (warnings, "warning")) if n]
    return " and ".join(parts) if parts else "no errors"
