"""The one place the server asks the engine about a document. Every diagnostic the
server shows comes from `check_document`, so project-wide analysis (issue 9) has a
single door to come in by: the store holds every open document's text for it."""
from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..fixer import mark_unfixable
from .documents import DocumentStore, filename_for
from .settings import FileSettings


@dataclass(frozen=True)
class CheckRequest:
    """A snapshot taken on the protocol thread: the worker never reads the live store
    entry, so a newer version arriving mid-check cannot tear the text."""

    uri: str
    version: int | None
    text: str
    settings: FileSettings | None
    # bumped when something other than the text changed (config, a dependency)
    generation: int = 0
    # why there are no settings (a pyproject.toml that cannot be used)
    config_error: str | None = None


@dataclass(frozen=True)
class CheckResult:
    request: CheckRequest
    diagnostics: list[Diagnostic]
    error: str | None = None


def check_document(request: CheckRequest, store: DocumentStore) -> CheckResult:
    """Diagnostics for one snapshot, with the project modules it imports read from
    `store` (the editor's unsaved texts first, else the disk)."""
    settings = request.settings
    if settings is None:
        return CheckResult(request, [], error=request.config_error)
    if settings.excluded:
        return CheckResult(request, [])
    found = store.project.check(request.text, filename_for(request.uri), settings.codes)
    return CheckResult(request, mark_unfixable(found, settings.unfixable))
