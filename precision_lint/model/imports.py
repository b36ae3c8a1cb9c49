"""Qualified names through imports: `th.zeros` -> `torch.zeros`, `z` -> `torch.zeros`.

One pass over the module's import statements (at any depth: a function-level
`import torch` is common in training scripts). Local rebinding of an imported name
is the interpreter's job: it looks in its own bindings first.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass, field

import libcst as cst

_BUILTIN_NAMES = frozenset(dir(builtins))


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` -> "a.b.c"; None for anything that is not a plain dotted name."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


@dataclass
class ImportMap:
    # local name -> fully qualified name it stands for
    names: dict[str, str] = field(default_factory=dict)
    # local names bound to the `torch` module itself at module level (for writing fixes)
    torch_module_aliases: list[str] = field(default_factory=list)
    # the first top-level import statement, where a fix may add `import torch`
    first_import: cst.CSTNode | None = None

    def qualify_name(self, name: str) -> str | None:
        if name in self.names:
            return self.names[name]
        if name in _BUILTIN_NAMES:
            return f"builtins.{name}"
        return None

    def torch_alias(self) -> str | None:
        return self.torch_module_aliases[0] if self.torch_module_aliases else None


class _ImportCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.imports = ImportMap()
        self._depth = 0  # >0 inside a function or class body

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._depth += 1

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._depth -= 1

    def _note_top_level(self, node: cst.CSTNode) -> None:
        if self._depth == 0 and self.imports.first_import is None:
            self.imports.first_import = node

    def visit_Import(self, node: cst.Import) -> None:
        self._note_top_level(node)
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
                self.imports.names[local] = full
            else:
                # `import torch.distributed` binds `torch`.
                local = full.split(".")[0]
                self.imports.names[local] = local
            if self.imports.names[local] == "torch" and self._depth == 0:
                self.imports.torch_module_aliases.append(local)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is None or node.relative:
            return  # relative imports never reach torch
        module = dotted_name(node.module)
        if module is None or module == "__future__":
            return
        self._note_top_level(node)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports.names[local] = f"{module}.{alias.name.value}"


def collect_imports(module: cst.Module) -> ImportMap:
    collector = _ImportCollector()
    module.visit(collector)
    return collector.imports
