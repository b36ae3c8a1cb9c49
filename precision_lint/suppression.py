"""`# noqa` and `# noqa: PH001, PH002` comments on the reported line."""
from __future__ import annotations

import re
from dataclasses import dataclass

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
OUR_PREFIX = "PH"


@dataclass(frozen=True)
class Noqa:
    row: int
    # Codes in the order written; None for a bare `# noqa` (suppresses everything).
    codes: tuple[str, ...] | None
    # 0-based character span of the directive within its line.
    start: int
    end: int

    def suppresses(self, code: str | None) -> bool:
        if code is None:
            return False  # syntax errors are never suppressed
        return self.codes is None or code in self.codes

    def ours(self) -> tuple[str, ...]:
        """The codes that belong to this tool (others are other linters' business)."""
        return tuple(c for c in self.codes or () if c.startswith(OUR_PREFIX))


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
            number,
            None if codes is None else tuple(c.upper() for c in _CODE.findall(codes)),
            match.start(),
            match.end(),
        )
    return directives


def directive_text(codes: tuple[str, ...]) -> str:
    return f"# noqa: {', '.join(codes)}"
