"""Finds the rule classes in the `precision_lint.rules` package (the repository's
`rules/` folder, mapped there by pyproject.toml)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    # imported here: the rule modules (and Rule) import the model and libcst, which
    # code that only needs the rules' codes does not (catalog.py)
    from . import rules as package
    from .rule import Rule

    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                found.append(value)
    found.sort(key=lambda rule: rule.code)
    codes = [rule.code for rule in found]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(found)


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    for rule in all_rules():
        if key.upper() == rule.code or key == rule.name:
            return rule
    return None
