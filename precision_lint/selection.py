"""Rule selectors (`ALL`, `PH`, `PH0`, `PH001`) resolved the way Ruff does: the
most specific matching selector wins, and on a tie `ignore` wins. Selections come
in steps (the defaults, each config file from the farthest `extend` to the nearest,
then the command line); a step with `select` starts afresh, one without changes
only the rules its `extend-select` and `ignore` name."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .catalog import rule_codes, rule_entries  # read from source: no rule module imported
from .failures import failure_code_note
from .suggest import did_you_mean


class UnknownSelector(ValueError):
    pass


@dataclass(frozen=True)
class SelectionStep:
    select: tuple[str, ...] | None = None  # None: this step keeps what came before
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    origin: str = ""  # the config file or the command line it came from (for --show-settings)


def _specificity(selector: str, code: str) -> int | None:
    """How specifically `selector` matches `code` (None: it does not)."""
    if selector == "ALL":
        return 0
    return len(selector) if code.startswith(selector) else None


def _known_selectors() -> list[str]:
    codes = rule_codes()
    prefixes = {code[:length] for code in codes for length in range(2, len(code))}
    return ["ALL", *sorted(prefixes), *codes]


def validate(selectors: Iterable[str]) -> list[str]:
    codes = rule_codes()
    normalized = []
    for selector in selectors:
        written = selector.strip()
        selector = written.upper()
        if not selector:
            continue
        if selector != "ALL" and not any(code.startswith(selector) for code in codes):
            note = failure_code_note(written)
            raise UnknownSelector(f"Unknown rule selector: {note}" if note else f"Unknown rule selector: `{written}`{_hint(written)}")
        normalized.append(selector)
    return normalized


def _hint(written: str) -> str:
    by_name = {entry.name: entry.code for entry in rule_entries()}
    if written.lower() in by_name:
        return f"; did you mean `{by_name[written.lower()]}` ({written.lower()})?"
    return did_you_mean(written.upper(), _known_selectors(), quote="`")


def _best(selectors: Iterable[str], code: str) -> int | None:
    return max((s for selector in selectors if (s := _specificity(selector, code)) is not None), default=None)


def resolve_steps(steps: Iterable[SelectionStep]) -> frozenset[str]:
    enabled: set[str] = set()
    for step in steps:
        positive = validate([*(step.select or ()), *step.extend_select])
        negative = validate(step.ignore)
        if step.select is not None:
            enabled = set()
        for code in rule_codes():
            best_on, best_off = _best(positive, code), _best(negative, code)
            if best_on is not None and (best_off is None or best_on > best_off):
                enabled.add(code)
            elif best_off is not None:
                enabled.discard(code)
    return frozenset(enabled)


def enabled_codes(select: Iterable[str], extend_select: Iterable[str], ignore: Iterable[str]) -> frozenset[str]:
    return resolve_steps([SelectionStep(tuple(select), tuple(extend_select), tuple(ignore))])


def matching_codes(selectors: Iterable[str]) -> frozenset[str]:
    """Every rule code any of `selectors` matches."""
    chosen = validate(selectors)
    return frozenset(
        code for code in rule_codes() if any(_specificity(s, code) is not None for s in chosen)
    )
