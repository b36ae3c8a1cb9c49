"""What the rules are (code, name, summary, fix availability, documentation), read from
the rule modules' source with the standard parser instead of importing them: a rule
module imports the semantic model and libcst, which `precision-lint rule`, the rule
selection of every run and a fully cached run do not need (importing them costs
several times what those commands take otherwise).

The rule classes stay the truth: tests/test_speed.py checks that every entry says
what its class says, and where the source cannot be read (an install without .py
files) the classes themselves are imported.
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path

from .diagnostics import Severity


class FixAvailability(Enum):
    NONE = "none"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@dataclass(frozen=True)
class RuleEntry:
    code: str
    name: str
    summary: str
    fix_availability: FixAvailability
    doc: str
    default_severity: Severity = Severity.ERROR

    def documentation(self) -> str:
        return textwrap.dedent(self.doc).strip()


@lru_cache(maxsize=1)
def rule_entries() -> tuple[RuleEntry, ...]:
    """Every rule, in code order."""
    from . import rules

    found: list[RuleEntry] = []
    try:
        for folder in rules.__path__:
            for path in sorted(Path(folder).glob("*.py")):
                found.extend(_entries_in(path.read_text(encoding="utf-8")))
    except (OSError, SyntaxError, ValueError, KeyError):
        found = []
    if not found:
        from .registry import all_rules

        found = [
            RuleEntry(r.code, r.name, r.summary, r.fix_availability, r.__doc__ or "", r.default_severity)
            for r in all_rules()
        ]  # fmt: skip
    found.sort(key=lambda entry: entry.code)
    return tuple(found)


# a rule class's own `code = "PH001"` line
_CODE = re.compile(r"""^[ \t]+code[ \t]*=[ \t]*["']([A-Z]+[0-9]+)["']""", re.MULTILINE)


@lru_cache(maxsize=1)
def rule_codes() -> tuple[str, ...]:
    """The rules' codes, sorted: what every run's rule selection needs, read without
    parsing the rule modules (parsing them all costs tens of milliseconds)."""
    from . import rules

    try:
        codes = [code for folder in rules.__path__ for path in Path(folder).glob("*.py") for code in _CODE.findall(path.read_text(encoding="utf-8"))]
    except OSError:
        codes = []
    return tuple(sorted(codes)) if codes else tuple(entry.code for entry in rule_entries())


def entry_by_code_or_name(key: str) -> RuleEntry | None:
    for entry in rule_entries():
        if key.upper() == entry.code or key == entry.name:
            return entry
    return None


def _entries_in(source: str) -> list[RuleEntry]:
    """The rule classes of one module: classes with a `code = "..."` of their own
    that derive from `Rule` (what registry.all_rules finds by importing)."""
    entries = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef) or not any(_base_name(b) == "Rule" for b in node.bases):
            continue
        values: dict[str, object] = {}
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                values[statement.targets[0].id] = statement.value
        if "code" not in values:
            continue
        availability = values.get("fix_availability")
        fix = FixAvailability[availability.attr] if isinstance(availability, ast.Attribute) else FixAvailability.NONE
        severity = values.get("default_severity")
        level = Severity[severity.attr] if isinstance(severity, ast.Attribute) else Severity.ERROR
        entries.append(
            RuleEntry(
                _text(values["code"]), _text(values["name"]), _text(values["summary"]), fix,
                ast.get_docstring(node, clean=False) or "", level,
            )
        )  # fmt: skip
    return entries


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise ValueError("a rule's code, name and summary are string literals")
