"""Engine diagnostics as LSP diagnostics: severity, code, the rule's page, the
related places (the adds, the collectives, the use that decided the fix)."""
from __future__ import annotations

from lsprotocol import types

from ..diagnostics import Diagnostic, Location, Severity
from ..rule_pages import installed_project_urls, rule_url
from .positions import PositionMap

SOURCE = "precision-lint"
_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}
def rule_page_url(code: str, project_urls: tuple[str, ...] | None = None) -> str | None:
    """The rule's page, as the CLI links it (rule_pages.rule_url); None when the package
    names no documentation or repository (then the editor shows the code without a
    link, rather than a link to a host we made up)."""
    return rule_url(code, _installed_project_urls() if project_urls is None else project_urls)


def _installed_project_urls() -> tuple[str, ...]:
    return installed_project_urls()


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
