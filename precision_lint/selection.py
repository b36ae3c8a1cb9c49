"""Rule selectors (`ALL`, `PH`, `PH0`, `PH001`) resolved the way Ruff does: the
most specific matching selector wins, and on a tie `ignore` wins."""
from __future__ import annotations

from typing import Iterable

from .catalog import rule_codes  # the codes, without importing the rules


class UnknownSelector(ValueError):
    pass


def _specificity(selector: str, code: str) -> int | None:
    """How specifically `selector` matches `code` (None: it does not)."""
    if selector == "ALL":
        return 0
    return len(selector) if code.startswith(selector) else None


def validate(selectors: Iterable[str]) -> list[str]:
    codes = list(rule_codes())
    normalized = []
    for selector in selectors:
        selector = selector.strip().upper()
        if not selector:
            continue
        if selector != "ALL" and not any(code.startswith(selector) for code in codes):
            raise UnknownSelector(f"Unknown rule selector: `{selector}`")
        normalized.append(selector)
    return normalized


def enabled_codes(select: Iterable[str], extend_select: Iterable[str], ignore: Iterable[str]) -> frozenset[str]:
    positive = validate([*select, *extend_select])
    negative = validate(ignore)
    enabled = set()
    for code in rule_codes():
        best_on = max((s for sel in positive if (s := _specificity(sel, code)) is not None), default=None)
        best_off = max((s for sel in negative if (s := _specificity(sel, code)) is not None), default=None)
        if best_on is not None and (best_off is None or best_on > best_off):
            enabled.add(code)
    return frozenset(enabled)


def matching_codes(selectors: Iterable[str]) -> frozenset[str]:
    """Every rule code any of `selectors` matches."""
    chosen = validate(selectors)
    return frozenset(
        code for code in rule_codes() if any(_specificity(s, code) is not None for s in chosen)
    )
