"""Engine diagnostics as LSP diagnostics: severity, code, the rule's page, the
related places (the adds, the collectives, the use that decided the fix)."""
from __future__ import annotations

from functools import lru_cache
from importlib import metadata

from lsprotocol import types

from ..diagnostics import Diagnostic, Location, Severity
from .positions import PositionMap

SOURCE = "precision-lint"
_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}
# [project.urls] labels that name the repository holding docs/rules/, best first
_REPOSITORY_LABELS = ("repository", "source", "source code", "code", "homepage")


def rule_page_url(code: str, project_urls: tuple[str, ...] | None = None) -> str | None:
    """docs/rules/CODE.md in the repository that [project.urls] names; None when the
    package names no repository (then the editor shows the code without a link,
    rather than a link to a host we made up)."""
    entries = _installed_project_urls() if project_urls is None else project_urls
    by_label: dict[str, str] = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            by_label.setdefault(label.strip().lower(), url.strip().rstrip("/"))
    for label in _REPOSITORY_LABELS:
        if label in by_label:
            return f"{by_label[label]}/blob/main/docs/rules/{code}.md"
    return None


@lru_cache(maxsize=1)
def _installed_project_urls() -> tuple[str, ...]:
    try:
        return tuple(metadata.metadata("precision-lint").get_all("Project-URL") or ())
    except metadata.PackageNotFoundError:
        return ()


def lsp_range(positions: PositionMap, start: Location, end: Location) -> types.Range:
    first, last = positions.to_lsp(start), positions.to_lsp(end)
    return types.Range(
        start=types.Position(line=first.line, character=first.character),
        end=types.Position(line=last.line, character=last.character),
    )


def to_lsp(diagnostic: Diagnostic, uri: str, positions: PositionMap, related_support: bool = True) -> types.Diagnostic:
    message = diagnostic.message
    if diagnostic.note:
        message = f"{message}\n{diagnostic.note}"
    related = None
    if diagnostic.related:
        if related_support:
            related = [
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=uri, range=lsp_range(positions, r.location, r.end_location)),
                    message=r.message,
                )
                for r in diagnostic.related
            ]
        else:  # a client that cannot show them still gets the lines in the message
            message += "".join(f"\n{r.message}: line {r.location.row}" for r in diagnostic.related)
    end = diagnostic.end_location
    if diagnostic.code is None and end == diagnostic.location:
        end = Location(end.row, end.column + 1)  # a syntax error: mark one character
    href = rule_page_url(diagnostic.code) if diagnostic.code else None
    return types.Diagnostic(
        range=lsp_range(positions, diagnostic.location, end),
        message=message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code or diagnostic.name,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related,
    )
