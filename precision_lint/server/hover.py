"""Hover on a flagged expression: the rule's page, as `precision-lint rule CODE` prints it."""
from __future__ import annotations

from lsprotocol import types

from ..diagnostics import Diagnostic
from ..registry import rule_by_code_or_name
from .lsp_diagnostics import lsp_range
from .positions import PositionMap


def _contains(area: types.Range, position: types.Position) -> bool:
    here = (position.line, position.character)
    return (area.start.line, area.start.character) <= here <= (area.end.line, area.end.character)


def hover(diagnostics: list[Diagnostic], position: types.Position, positions: PositionMap) -> types.Hover | None:
    pages: list[str] = []
    first: types.Range | None = None
    for diagnostic in diagnostics:
        if diagnostic.code is None:
            continue
        area = lsp_range(positions, diagnostic.location, diagnostic.end_location)
        rule = rule_by_code_or_name(diagnostic.code)
        if rule is None or not _contains(area, position):
            continue
        first = first or area
        pages.append(f"**{rule.code}** `{rule.name}`: {diagnostic.message}\n\n{rule.documentation()}")
    if not pages:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(pages)),
        range=first,
    )
