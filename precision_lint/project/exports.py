"""What a module imports from the project, read with the standard parser: the summary
of a module the prefilter skips (its re-exports still resolve), and the stubs of the
packages' re-exports that the first round is answered from before the packages are
checked (project/analysis.py). Nothing here imports libcst or the model: the run's
own process reads these while its workers start."""
from __future__ import annotations

import ast
from typing import Any

from ..source import standard_tree
from .modules import absolute_module

# imports that never lead into the project's own modules
_LIBRARIES = ("torch", "builtins", "numpy", "typing", "os", "sys", "math", "logging", "collections", "dataclasses")


def is_library(name: str) -> bool:
    """`torch.nn` is torch's; `torchao.optim` and `torchmetrics` are not (a prefix of
    the name is not a package of it)."""
    return name.partition(".")[0] in _LIBRARIES


def exports_summary(source: str, module_name: str, package: str, display_path: str) -> dict[str, Any] | None:
    """The summary of a module with nothing to check (no torch, no counting): only
    the names it imports, so re-exports (`pkg/__init__.py`) still resolve. Read
    with the standard parser, which is several times faster than the concrete one.
    `modeled` is false: when the project's code calls one of its functions, the
    module is modeled for its summary then (project/analysis.py)."""
    imported = _imported_names(source, package)
    if imported is None:
        return None
    exports, stars = imported
    return {
        "module": module_name, "path": display_path, "functions": {}, "classes": {},
        "exports": exports, "calls": {}, "opaque_calls": [], "evidence": [], "modeled": False,
        "star_imports": stars,
    }  # fmt: skip


def _imported_names(source: str, package: str) -> tuple[dict[str, str], list[str]] | None:
    """The project names a module imports and the project modules it star-imports
    (None: it does not parse)."""
    if "import" not in source:
        return {}, []
    try:
        tree = standard_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    exports, stars = {}, set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = absolute_module(node.module or "", node.level, package)
            if base is None or is_library(base) or base == "__future__":
                continue
            if any(alias.name == "*" for alias in node.names):
                stars.add(base)
            for alias in node.names:
                if alias.name != "*":
                    exports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and not is_library(alias.name):
                    exports[alias.asname] = alias.name
    return exports, sorted(stars)
