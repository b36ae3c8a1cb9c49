"""Qualified names through imports: `th.zeros` -> `torch.zeros`, `z` -> `torch.zeros`.

One pass over the module's import statements (at any depth: a function-level
`import torch` is common in training scripts), without entering expressions. Local rebinding of an imported name
is the interpreter's job: it looks in its own bindings first.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass, field

import libcst as cst

from ..project.modules import absolute_module
from .walk import child_statements

_BUILTIN_NAMES = frozenset(dir(builtins))


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` -> "a.b.c"; None for anything that is not a plain dotted name."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
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
    # modules imported with `from m import *` (their names are not known here)
    star_modules: list[str] = field(default_factory=list)

    def qualify_name(self, name: str) -> str | None:
        if name in self.names:
            return self.names[name]
        if name in _BUILTIN_NAMES:
            return f"builtins.{name}"
        return None

    def qualify_dotted(self, name: str | None) -> str | None:
        """`dist.all_reduce` -> "torch.distributed.all_reduce": the head resolved."""
        if name is None:
            return None
        head, dot, rest = name.partition(".")
        root = self.qualify_name(head)
        return None if root is None else root + dot + rest

    def torch_alias(self) -> str | None:
        return self.torch_module_aliases[0] if self.torch_module_aliases else None


def collect_imports(module: cst.Module, package: str = "") -> ImportMap:
    """`package`: the package a relative import starts from (`from .util import f`
    in pkg/train.py is `pkg.util.f`)."""
    imports = ImportMap()
    _collect(module.body, imports, top_level=True, package=package)
    # where a fix may add `import torch`: before the first import directly in the
    # module body (not one inside a top-level `try:` or `if`)
    imports.first_import = next(
        (
            small
            for statement in module.body
            if type(statement) is cst.SimpleStatementLine
            for small in statement.body
            if type(small) is cst.Import
            or (type(small) is cst.ImportFrom and not (small.module and dotted_name(small.module) == "__future__"))
        ),
        None,
    )
    return imports


def _collect(block, imports: ImportMap, top_level: bool, package: str) -> None:
    for statement in block:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Import:
                    _import(small, imports, top_level)
                elif type(small) is cst.ImportFrom:
                    _import_from(small, imports, package)
        else:
            # Imports in a def or class still name modules, but only module-level
            # ones (an `if` or `try` at the top included) bind `torch` for fixes.
            nested_top = top_level and type(statement) not in (cst.FunctionDef, cst.ClassDef)
            _collect(child_statements(statement), imports, nested_top, package)


def _import(node: cst.Import, imports: ImportMap, top_level: bool) -> None:
    for alias in node.names:
        full = dotted_name(alias.name)
        if full is None:
            continue
        if alias.asname is not None and type(alias.asname.name) is cst.Name:
            local = alias.asname.name.value
            imports.names[local] = full
        else:
            # `import torch.distributed` binds `torch`.
            local = full.split(".")[0]
            imports.names[local] = local
        if imports.names[local] == "torch" and top_level:
            imports.torch_module_aliases.append(local)


def _import_from(node: cst.ImportFrom, imports: ImportMap, package: str) -> None:
    module = dotted_name(node.module) if node.module is not None else ""
    if module is None or module == "__future__":
        return
    if node.relative:
        module = absolute_module(module, len(node.relative), package)
        if module is None:
            return
    if type(node.names) is cst.ImportStar:
        imports.star_modules.append(module)
        return
    for alias in node.names:
        if type(alias.name) is not cst.Name:
            continue
        local = alias.name.value
        if alias.asname is not None and type(alias.asname.name) is cst.Name:
            local = alias.asname.name.value
        imports.names[local] = f"{module}.{alias.name.value}" if module else alias.name.value
