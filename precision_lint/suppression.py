"""`# noqa` and `# noqa: PH001, PH002` comments on the reported line."""
from __future__ import annotations

import re
import tokenize
from dataclasses import dataclass

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# A directive is a comment, so its line has a `#` before the `noqa`: without such a
# line the file is not tokenized (the tokenizer is the costly part).
_CANDIDATE = re.compile(r"#[^\r\n]*noqa", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
OUR_PREFIX = "PH"
# a comment line whose noqa may name one of this tool's codes (codes are read
# case-blind, `ph001` is PH001)
_OURS_CANDIDATE = re.compile(r"#[^\r\n]*noqa[^\r\n]*ph[0-9]", re.IGNORECASE)


@dataclass(frozen=True)
class Noqa:
    row: int
    # Codes in the order written; None for a bare `# noqa` (suppresses everything).
    codes: tuple[str, ...] | None
    # 0-based character span of the directive within its line.
    start: int
    end: int
    # more comment text after the directive (`# noqa: PH001 counts are small`)
    trailing_text: bool = False

    def suppresses(self, code: str | None) -> bool:
        if code is None:
            return False  # syntax errors are never suppressed
        return self.codes is None or code in self.codes

    def ours(self) -> tuple[str, ...]:
        """The codes that belong to this tool (others are other linters' business)."""
        return tuple(c for c in self.codes or () if c.startswith(OUR_PREFIX))


def noqa_by_line(source: str) -> dict[int, Noqa]:
    """1-based line -> its noqa directive (only lines that have one). Only real
    comments count (the tokenizer tells them from `# noqa` inside a string), and
    lines are numbered as Python numbers them (a form feed is not a line break)."""
    directives: dict[int, Noqa] = {}
    if _CANDIDATE.search(source) is None:
        return directives
    try:
        tokens = list(tokenize.generate_tokens(iter(physical_lines(source)).__next__))
    except (tokenize.TokenError, SyntaxError):
        return directives  # the file does not parse: it is reported as such
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = _NOQA.search(token.string)
        if match is None:
            continue
        row, column = token.start
        codes = match.group("codes")
        directives[row] = Noqa(
            row,
            None if codes is None else tuple(c.upper() for c in _CODE.findall(codes)),
            column + match.start(),
            column + match.end(),
            trailing_text=bool(token.string[match.end() :].strip()),
        )
    return directives


def may_name_our_codes(source: str) -> bool:
    """False where no noqa directive in `source` can name one of this tool's codes:
    then none can go unused, and a file without findings need not be tokenized."""
    return _OURS_CANDIDATE.search(source) is not None


def physical_lines(source: str) -> list[str]:
    """The lines of `source` as libcst and the fixer count them: `\n`, `\r\n` and a
    lone `\r` all end a line. Each keeps a `\n` ending, which is what the tokenizer
    expects (it splits only on `\n`, so a CR-only file would be one line to it)."""
    return [match.group().rstrip("\r\n") + "\n" for match in _LINE.finditer(source)]


def directive_text(codes: tuple[str, ...]) -> str:
    return f"# noqa: {', '.join(codes)}"
