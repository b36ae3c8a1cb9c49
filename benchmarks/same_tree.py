"""Holds precision_lint/quick_tree.py's tree to libcst's parse, node for node and field
for field, leaving out only whitespace, comments, parentheses and punctuation (which
the quick tree does not carry and the model never reads).

    python benchmarks/same_tree.py TREE [TREE ...]

prints each file whose trees differ (with the first difference), how many files the
quick tree declined (they are parsed with libcst), and exits 1 on any difference.
tests/test_quick_tree.py runs the same comparison on every construct.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import libcst as cst

# fields that hold layout only (names of whitespace fields start with "whitespace")
LAYOUT = frozenset(
    {
        "lpar", "rpar", "leading_lines", "trailing_whitespace", "leading_whitespace", "header", "footer",
        "indent", "semicolon", "comma", "equal", "colon", "dot", "lbracket", "rbracket", "lbrace", "rbrace",
        "first_colon", "second_colon", "lines_after_decorators", "encoding", "default_indent",
        "default_newline", "has_trailing_newline",
    }
)  # fmt: skip


def differences(quick: object, real: object, where: str = "module") -> list[str]:
    """Where the two trees differ (empty: the same shape)."""
    if isinstance(real, cst.CSTNode) or isinstance(quick, cst.CSTNode):
        if type(quick) is not type(real):
            return [f"{where}: {type(quick).__name__} against libcst's {type(real).__name__}"]
        found = []
        for field in dataclasses.fields(real):
            if field.name in LAYOUT or field.name.startswith("whitespace"):
                continue
            found += differences(getattr(quick, field.name), getattr(real, field.name), f"{where}.{field.name}")
        return found
    if isinstance(real, (list, tuple)) and isinstance(quick, (list, tuple)):
        if len(quick) != len(real):
            return [f"{where}: {len(quick)} items against libcst's {len(real)}"]
        found = []
        for index, (a, b) in enumerate(zip(quick, real)):
            found += differences(a, b, f"{where}[{index}]")
        return found
    return [] if quick == real else [f"{where}: {quick!r} against libcst's {real!r}"]


def main(roots: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from precision_lint.quick_tree import quick_module

    checked = declined = differing = 0
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            try:
                source = path.read_text(encoding="utf-8")
                real = cst.parse_module(source)
            except Exception:  # libcst refuses it: the engine reports a syntax error
                continue
            quick = quick_module(source)
            checked += 1
            if quick is None:
                declined += 1
                continue
            found = differences(quick.module, real)
            if found:
                differing += 1
                print(f"{path}: {found[0]} ({len(found)} differences)")
    print(f"{checked} files, {declined} parsed by libcst instead, {differing} differing")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
