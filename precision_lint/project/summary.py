"""A module's summary: what the project index needs from one module's model, as
plain data (cached with the file's results)."""
from __future__ import annotations

import ast
import re
from typing import Any

from ..model.imports import absolute_module
from ..model.semantic import SemanticModel
from ..model.summaries import Evidence
from .portable import summary_to_data, value_to_data

# imports that never lead into the project's own modules
_LIBRARIES = ("torch", "builtins", "numpy", "typing", "os", "sys", "math", "logging", "collections", "dataclasses")


def summarize(model: SemanticModel, display_path: str, source: str, evidence: list[Evidence]) -> dict[str, Any]:
    lines = _DefinitionLines(source)
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
            if not target.startswith(_LIBRARIES) and local not in _own_names(model)
        },  # fmt: skip
        "calls": {
            callee: [[[value_to_data(v) for v in positional], {k: value_to_data(v) for k, v in keywords.items()}]
                     for positional, keywords in sites]
            for callee, sites in model.external_calls.items()
        },  # fmt: skip
        "opaque_calls": sorted(model.opaque_calls),
        "evidence": [[e.kind, e.text, e.where] for e in evidence],
    }


def exports_summary(source: str, module_name: str, package: str, display_path: str) -> dict[str, Any] | None:
    """The summary of a module with nothing to check (no torch, no counting): only
    the names it imports, so re-exports (`pkg/__init__.py`) still resolve. Read
    with the standard parser, which is several times faster than the concrete one."""
    if "import" not in source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    exports = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = absolute_module(node.module or "", node.level, package)
            if base is None or base.startswith(_LIBRARIES) or base == "__future__":
                continue
            for alias in node.names:
                if alias.name != "*":
                    exports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and not alias.name.startswith(_LIBRARIES):
                    exports[alias.asname] = alias.name
    if not exports:
        return None
    return {
        "module": module_name, "path": display_path, "functions": {}, "classes": {},
        "exports": exports, "calls": {}, "opaque_calls": [], "evidence": [],
    }  # fmt: skip


def _own_names(model: SemanticModel) -> set[str]:
    prefix = model.module_name + "."
    return {q[len(prefix) :] for q in list(model.definitions.functions) + list(model.definitions.classes) if "." not in q[len(prefix) :]}


class _DefinitionLines:
    """The line of `def name` (in `class owner`, for a method): found in the text, so
    no position pass over the tree is needed."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._lines: list[str] | None = None

    def line_of(self, name: str, owner: str | None) -> int | None:
        if self._lines is None:
            self._lines = self.source.splitlines()
        pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(")
        start = 0
        if owner is not None:
            cls = re.compile(rf"^\s*class\s+{re.escape(owner.rpartition('.')[2])}\b")
            start = next((i for i, text in enumerate(self._lines) if cls.match(text)), 0)
        for number in range(start, len(self._lines)):
            if pattern.match(self._lines[number]):
                return number + 1
        return None
