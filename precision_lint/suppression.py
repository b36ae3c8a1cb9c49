"""`# noqa` and `# noqa: PH001, PH002` comments on the reported line."""
from __future__ import annotations

import re
from dataclasses import dataclass

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


@dataclass(frozen=True)
class Noqa:
    codes: frozenset[str] | None  # None: a bare `# noqa` suppresses everything

    def suppresses(self, code: str | None) -> bool:
        if code is None:
            return False  # syntax errors are never suppressed
        return self.codes is None or code in self.codes


def noqa_by_line(source: str) -> dict[int, Noqa]:
    """1-based line -> its noqa directive (only lines that have one)."""
    directives: dict[int, Noqa] = {}
    if "noqa" not in source.lower():
        return directives
    for number, line in enumerate(source.splitlines(), start=1):
        if "#" not in line:
            continue
        match = _NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        directives[number] = Noqa(
            None if codes is None else frozenset(c.upper() for c in _CODE.findall(codes))
        )
    return directives
