"""A module's summary: what the project index needs from one module's model, as
plain data (cached with the file's results)."""
from __future__ import annotations

import re
from typing import Any

from ..model.semantic import SemanticModel
from ..model.summaries import Evidence
from .exports import is_library
from .portable import summary_to_data, value_to_data

def summarize(model: SemanticModel, display_path: str, source: str, evidence: list[Evidence]) -> dict[str, Any]:
    lines = _DefinitionLines(source)
    own = _own_names(model)  # once, not once per import (a 100k-line module has thousands)
    functions = {}
    for qualified, summary in model.summaries.items():
        info = model.definitions.functions.get(qualified)
        if info is None:
            continue  # a nested function: not callable from elsewhere
        where = f"{display_path}:{lines.line_of(info.name, info.owner)}" if summary.returns.informative else None
        functions[qualified] = summary_to_data(summary, where)
    return {
        "module": model.module_name,
        "path": display_path,
        "functions": functions,
        "classes": {q: list(info.bases) for q, info in model.definitions.classes.items()},
        "exports": {
            local: target for local, target in model.imports.names.items()
            if not is_library(target) and local not in own
        },  # fmt: skip
        "calls": {
            callee: [[[value_to_data(v) for v in positional], {k: value_to_data(v) for k, v in keywords.items()}]
                     for positional, keywords in sites]
            for callee, sites in model.external_calls.items()
        },  # fmt: skip
        "opaque_calls": sorted(model.opaque_calls),
        "evidence": [[e.kind, e.text, e.where] for e in evidence],
        "star_imports": sorted({m for m in model.imports.star_modules if not is_library(m)}),
    }


def _own_names(model: SemanticModel) -> set[str]:
    prefix = model.module_name + "."
    return {q[len(prefix) :] for q in list(model.definitions.functions) + list(model.definitions.classes) if "." not in q[len(prefix) :]}


class _DefinitionLines:
    """The line of `def name` (in `class owner`, for a method): found in the text, so
    no position pass over the tree is needed. The lines are read once: where each
    name is defined and where each class starts (one regex per function made this
    quadratic in a long module)."""

    # `def NAME (`: the name is everything up to the first space or parenthesis
    _DEF = re.compile(r"^\s*(?:async\s+)?def\s+([^\s(]+)\s*\(")

    def __init__(self, source: str) -> None:
        self.source = source
        self._lines: list[str] | None = None
        self._defs: dict[str, list[int]] = {}
        self._class_lines: list[tuple[int, str]] = []  # the lines that mention `class`
        self._classes: dict[str, int] = {}

    def _read(self) -> list[str]:
        if self._lines is None:
            self._lines = self.source.splitlines()
            for number, text in enumerate(self._lines):
                if "def" in text:
                    match = self._DEF.match(text)
                    if match is not None:
                        self._defs.setdefault(match.group(1), []).append(number)
                if "class" in text:
                    self._class_lines.append((number, text))
        return self._lines

    def _class_start(self, owner: str) -> int:
        """The index of the first line that starts `class <owner's last name>`, else 0."""
        name = owner.rpartition(".")[2]
        if name not in self._classes:
            self._read()
            cls = re.compile(rf"^\s*class\s+{re.escape(name)}\b")
            self._classes[name] = next((i for i, text in self._class_lines if cls.match(text)), 0)
        return self._classes[name]

    def line_of(self, name: str, owner: str | None) -> int | None:
        self._read()
        start = self._class_start(owner) if owner is not None else 0
        for number in self._defs.get(name, ()):
            if number >= start:
                return number + 1
        return None
