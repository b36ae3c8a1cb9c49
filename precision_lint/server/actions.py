"""Code actions: a finding's fix as a quick fix, a `# noqa` for its line, and
`source.fixAll.precision-lint` (every safe fix, through the fixer's loop)."""
from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from ..diagnostics import Applicability, Diagnostic
from ..fixer import applicable, fix_source
from ..noqa_writer import add_noqa
from .documents import filename_for
from .lsp_diagnostics import SOURCE, lsp_range
from .positions import PositionMap
from .settings import FileSettings

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
QUICK_FIX = types.CodeActionKind.QuickFix.value


@dataclass(frozen=True)
class Target:
    """The document an action edits, as the server has it."""

    uri: str
    version: int | None
    text: str
    versioned_edits: bool  # the client takes documentChanges (edits refused when stale)


def kind_requested(kind: str, only: list[str] | None) -> bool:
    """LSP's rule: `only` lists kinds or their prefixes (`source` covers `source.fixAll.x`)."""
    return only is None or any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def minimal_edit(old: str, new: str) -> tuple[int, int, str]:
    """The one replacement (start, end, text) that turns `old` into `new`, trimmed to
    what changed. Never splits a `\\r\\n`: LSP has no position between its halves."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    if 0 < end_old < len(old) and old[end_old - 1] == "\r" and old[end_old] == "\n":
        end_old += 1
        end_new += 1
    return start, end_old, new[start:end_new]


def text_edits(old: str, new: str, positions: PositionMap) -> list[types.TextEdit]:
    if old == new:
        return []
    start, end, content = minimal_edit(old, new)
    first, last = positions.position_at(start), positions.position_at(end)
    return [
        types.TextEdit(
            range=types.Range(
                start=types.Position(line=first.line, character=first.character),
                end=types.Position(line=last.line, character=last.character),
            ),
            new_text=content,
        )
    ]


def workspace_edit(target: Target, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    if target.versioned_edits:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=target.uri, version=target.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
    return types.WorkspaceEdit(changes={target.uri: edits})


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Closed ranges: a cursor at either end of a finding is on it."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def quick_fixes(
    target: Target,
    diagnostics: list[Diagnostic],
    lsp_diagnostics: list[types.Diagnostic],
    wanted: types.Range,
    settings: FileSettings,
    only: list[str] | None,
    encoding: str,
) -> list[types.CodeAction]:
    """The fix and the noqa action for every finding the range touches."""
    if not kind_requested(QUICK_FIX, only):
        return []
    positions = PositionMap(target.text, encoding)
    actions: list[types.CodeAction] = []
    for diagnostic, shown in zip(diagnostics, lsp_diagnostics):
        if diagnostic.code is None or not overlaps(shown.range, wanted):
            continue
        fix = diagnostic.fix
        if fix is not None and applicable(diagnostic, settings.unsafe_fixes, settings.unfixable):
            safe = fix.applicability is Applicability.SAFE
            edits = [
                types.TextEdit(range=lsp_range(positions, e.location, e.end_location), new_text=e.content)
                for e in fix.edits
            ]
            actions.append(
                types.CodeAction(
                    title=f"{diagnostic.code}: {fix.message}" + ("" if safe else " (unsafe fix)"),
                    kind=QUICK_FIX,
                    diagnostics=[shown],
                    is_preferred=safe,
                    edit=workspace_edit(target, edits),
                )
            )
        with_noqa, added = add_noqa(target.text, [diagnostic])
        if added:
            actions.append(
                types.CodeAction(
                    title=f"{diagnostic.code}: Add `# noqa: {diagnostic.code}`",
                    kind=QUICK_FIX,
                    diagnostics=[shown],
                    edit=workspace_edit(target, text_edits(target.text, with_noqa, positions)),
                )
            )
    return actions


def fix_all_edit(target: Target, settings: FileSettings, encoding: str) -> types.WorkspaceEdit | None:
    """Every safe fix, applied by the fixer (re-parse, re-check, until nothing
    changes); None when there is nothing to fix. Unsafe fixes stay quick fixes."""
    if settings.excluded:
        return None
    outcome = fix_source(target.text, filename_for(target.uri), settings.codes, False, settings.unfixable)
    if outcome.source == target.text:
        return None
    return workspace_edit(target, text_edits(target.text, outcome.source, PositionMap(target.text, encoding)))


def fix_all_action(edit: types.WorkspaceEdit | None, data: object = None) -> types.CodeAction:
    return types.CodeAction(title="precision-lint: Fix all safe fixes", kind=FIX_ALL, edit=edit, data=data)
