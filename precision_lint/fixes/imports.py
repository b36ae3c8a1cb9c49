"""How a fix spells `torch.int64` when the module must gain a name for it, so that
the module's imports stay sorted the way isort and Ruff's `I` rules sort them (a
fix must not fail the next hook in line):

1. reuse a name already bound to the torch module (`torch`, `th`);
2. else add `int64` to a `from torch import ...` (members in isort's order:
   CONSTANTS, Classes, then the rest, case-insensitively), and write `int64`;
3. else add `import torch` to the third-party section of the first import block:
   before the first `from` import or later-sorting `import` there, or after the
   last one; a section of its own (blank lines around it) after the standard
   library's, or before the first-party one, when there is no third-party section.

Sections are told apart as isort does by default: `__future__`, the standard
library (`sys.stdlib_module_names`), first party (the module's own top package, or
a package in the current folder or its `src/`, Ruff's default `src`), third party
(the rest), and relative imports (local).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

import libcst as cst

from ..model.imports import ImportMap, dotted_name
from ..rule import NodeEdit

# notebook.py ends each cell with this comment: isort sorts every cell on its own
CELL_END = "# precision-lint: end of cell"
_BOUND_ELSEWHERE = re.compile(r"(?<![\w.])int64\b")


@dataclass(frozen=True)
class TorchSpelling:
    module: str | None  # how to write `torch.` (None: the dtype is imported by name)
    dtype: str  # how to write torch's int64
    edits: tuple[NodeEdit, ...]  # the import to add, if any


def spell_int64(module: cst.Module, imports: ImportMap, module_name: str = "", need_module: bool = False) -> TorchSpelling | None:
    """None when the module has no import block to add to. `need_module`: the fix
    writes `torch.<something>` other than the dtype (a legacy constructor)."""
    newline = module.default_newline
    alias = imports.torch_alias()
    if alias is not None:
        return TorchSpelling(alias, f"{alias}.int64", ())
    if not need_module:
        bound = imports.names.get("int64")
        if bound == "torch.int64":
            return TorchSpelling(None, "int64", ())
        if bound is None and not _BOUND_ELSEWHERE.search(module.code):
            edit = _add_to_from_import(module)
            if edit is not None:
                return TorchSpelling(None, "int64", (edit,))
    edit = _place_import_torch(module, newline, module_name)
    return None if edit is None else TorchSpelling("torch", "torch.int64", (edit,))


# -- from torch import ... -----------------------------------------------------------
def _member_key(name: str) -> tuple:
    kind = 0 if name.isupper() and len(name) > 1 else (1 if name[:1].isupper() else 2)
    return (kind, name.lower(), name)


def _add_to_from_import(module: cst.Module) -> NodeEdit | None:
    for statement in _first_block(module):
        for small in statement.body:
            if not (isinstance(small, cst.ImportFrom) and not small.relative and dotted_name(small.module) == "torch"):
                continue
            if isinstance(small.names, cst.ImportStar) or any(alias.asname for alias in small.names):
                continue  # isort keeps `x as y` on lines of their own
            names = list(small.names)
            after = [a for a in names if _member_key(_alias_name(a)) > _member_key("int64")]
            # one member to a line: the parenthesis, and each comma, end their lines
            indent = _indent_after(small.lpar)
            exploded = indent is not None and (len(names) == 1 or _indent_after(names[0].comma) is not None)
            if after:
                target = after[0]
                # before the member, on a line of its own (a comment stays where it is)
                text = f"int64,\n{indent}" if exploded else "int64, "
                return NodeEdit(target, text, until=target)  # an insertion right before it
            last = names[-1]
            if exploded and _indent_after(last.comma) == "" and small.rpar is not None:
                # the last line, right before the `)` that starts its own line
                return NodeEdit(small.rpar, f"{indent}int64,\n", until=small.rpar)
            return NodeEdit(last.name, ", int64", where="after")
    return None


def _alias_name(alias: cst.ImportAlias) -> str:
    return dotted_name(alias.name) or ""


def _indent_after(token) -> str | None:
    """The indentation of the line after a parenthesis or comma that ends its line
    (past any comment on it), else None."""
    whitespace = getattr(token, "whitespace_after", None)
    if not isinstance(whitespace, cst.ParenthesizedWhitespace):
        return None
    return whitespace.last_line.value


# -- import torch ----------------------------------------------------------------------
def _first_block(module: cst.Module) -> list[cst.SimpleStatementLine]:
    """The first run of top-level import statements (a cell of a notebook ends it)."""
    block: list[cst.SimpleStatementLine] = []
    for statement in module.body:
        is_import = isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        )
        if block and (not is_import or _starts_cell(statement)):
            break
        if is_import:
            block.append(statement)
    return block


def _starts_cell(statement: cst.SimpleStatementLine) -> bool:
    return any(line.comment is not None and line.comment.value.startswith(CELL_END) for line in statement.leading_lines)


def _module_of(statement: cst.SimpleStatementLine) -> tuple[str, bool]:
    """(the dotted module name it imports, whether it is `from ... import`)."""
    small = statement.body[0]
    if isinstance(small, cst.ImportFrom):
        if small.relative:
            return "." * len(small.relative) + (dotted_name(small.module) or "" if small.module else ""), True
        return dotted_name(small.module) or "", True
    return dotted_name(small.names[0].name) or "", False


def _section(name: str, own_top: str) -> str:
    if name.startswith("."):
        return "local"
    top = name.split(".")[0]
    if top == "__future__":
        return "future"
    if top in sys.stdlib_module_names:
        return "stdlib"
    if top == own_top or _in_project(top):
        return "first"
    return "third"


def _in_project(top: str) -> bool:
    for folder in (".", "src"):
        base = os.path.join(folder, top)
        if os.path.isdir(base) or os.path.isfile(base + ".py"):
            return True
    return False


def _place_import_torch(module: cst.Module, newline: str, module_name: str) -> NodeEdit | None:
    block = _first_block(module)
    if not block:
        return None
    own_top = module_name.split(".")[0] if module_name else ""
    sections = [(statement, *_module_of(statement)) for statement in block]
    third = [(s, name, is_from) for s, name, is_from in sections if _section(name, own_top) == "third"]
    line = f"import torch{newline}"
    for statement, name, is_from in third:
        if is_from or name.lower() > "torch":
            return NodeEdit(statement.body[0], line, where="line_start")
    if third:
        return _after(third[-1][0], f"{newline}import torch")
    earlier = [s for s, name, _ in sections if _section(name, own_top) in ("future", "stdlib")]
    if earlier:
        return _after(earlier[-1], f"{newline}{newline}import torch")
    return NodeEdit(block[0].body[0], line + newline, where="line_start")


def _after(statement: cst.SimpleStatementLine, text: str) -> NodeEdit:
    """Insert `text` at the end of the statement's line (after its comment)."""
    comment = statement.trailing_whitespace.comment
    return NodeEdit(comment if comment is not None else statement, text, where="after")
