"""Project-wide answers for a file checked on its own (in the editor, from stdin):
the project modules it imports are read (the editor's unsaved text first, else the
disk) and summarized, each summary kept by content, so a change in a helper module
reaches the diagnostics of the files that use it."""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Callable

from ..conditions import resolve
from ..diagnostics import Diagnostic
from ..engine import check_module
from .index import ProjectIndex
from .modules import identify, modules_to_read

_REEXPORT_DEPTH = 3
_MAX_MODULES = 64


class WorkspaceProject:
    def __init__(self, read_text: Callable[[Path], str | None]) -> None:
        self.read_text = read_text
        self._summaries: dict[tuple[str, str], dict | None] = {}
        self._lock = threading.Lock()

    def check(self, text: str, filename: str, codes: frozenset[str]) -> list[Diagnostic]:
        first = check_module(text, filename, codes)
        summaries = [first.summary] if first.summary is not None else []
        summaries += self._imported(first.dependencies, filename, {s["module"] for s in summaries})
        index = ProjectIndex(summaries)
        result = first
        if any(index.fingerprint(key) != seen for key, seen in first.dependencies.items()):
            result = check_module(text, filename, codes, project=index.slice_for(first.dependencies))
        facts = index.facts_for(first.summary["path"]) if first.summary is not None else index.facts
        return resolve(result.diagnostics, facts)

    def _imported(self, dependencies: dict[str, str], filename: str, known: set[str]) -> list[dict]:
        identity = identify(filename)
        roots = list(dict.fromkeys([identity.root, str(Path(filename).resolve().parent)]))
        names = [key.partition(":")[2] for key in dependencies]
        found: list[dict] = []
        for _ in range(_REEXPORT_DEPTH):
            wanted = modules_to_read(names, roots, known)
            if not wanted or len(found) >= _MAX_MODULES:
                break
            known |= set(wanted)
            summaries = [s for path in wanted.values() if (s := self._summary(path)) is not None]
            found.extend(summaries)
            names = [target for summary in summaries for target in summary["exports"].values()]
        return found

    def _summary(self, path: Path) -> dict | None:
        text = self.read_text(path)
        if text is None:
            return None
        key = (str(path), hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            if key in self._summaries:
                return self._summaries[key]
        # read because the file asks about its names: modeled even without torch's words,
        # as `check` models the callees its prefilter skipped
        summary = check_module(text, str(path), frozenset(), summary_only=True, called=True).summary
        with self._lock:
            self._summaries[key] = summary
        return summary
