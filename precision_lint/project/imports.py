"""Which modules of a project run together, from their imports.

A line that shows how a model runs (`model.bfloat16()`, `with torch.autocast(...)`)
concerns the code that runs with it: its own package folder, what its module imports,
and what the scripts that import its module import (a training loop in a library gets
the model from the script that builds it). It does not concern a test or another application that never
imports it, or anything it imports: a test's `torch.autocast` says nothing of a
benchmark script, nor one application's bf16 settings of another's."""
from __future__ import annotations

import os
from collections import deque
from typing import Any, Callable, Iterable


class ImportGraph:
    def __init__(
        self,
        summaries: Iterable[dict[str, Any]],
        modules: dict[str, dict[str, Any]],
        module_named: Callable[[str], str | None],
        module_of: Callable[[str], str | None],
    ) -> None:
        path_of = {name: data["path"] for name, data in modules.items()}  # names that are not ambiguous
        self._imports: dict[str, set[str]] = {}
        self._importers: dict[str, set[str]] = {}
        for summary in summaries:
            path = summary["path"]
            imported = self._imports.setdefault(path, set())
            for target in summary.get("exports", {}).values():
                module = module_named(target) or module_of(target)
                if module is not None and path_of.get(module) not in (None, path):
                    imported.add(path_of[module])
            for star in summary.get("star_imports", ()):  # `from .layers import *`
                module = module_named(star)
                if path_of.get(module) not in (None, path):
                    imported.add(path_of[module])
            for other in imported:
                self._importers.setdefault(other, set()).add(path)
        self._together: dict[str, set[str]] = {}

    def run_together(self, evidence_path: str, path: str) -> bool:
        """Whether `path` runs alongside `evidence_path`: both in one package folder
        (a package's training step and its layers, which it is handed), or some module
        (either of them included) imports both, directly or through others. A file the
        project does not know (not in this run) is given the benefit of the doubt."""
        if evidence_path not in self._imports or path not in self._imports:
            return True
        if os.path.dirname(evidence_path) == os.path.dirname(path):
            return True
        if evidence_path not in self._together:
            roots = _reach([evidence_path], self._importers)
            self._together[evidence_path] = _reach(roots, self._imports)
        return path in self._together[evidence_path]


def _reach(starts: Iterable[str], edges: dict[str, set[str]]) -> set[str]:
    seen = set(starts)
    queue = deque(seen)
    while queue:
        for other in edges.get(queue.popleft(), ()):
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen
