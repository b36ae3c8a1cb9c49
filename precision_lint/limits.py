"""Input limits checked before a file is parsed: its size and how deeply its brackets
nest. libcst's parser needs memory and time far out of proportion on such input (5,000
nested parentheses: 2.8 GB; 100,000: a segfault), so a file over a limit is reported
and not parsed. Both limits are settings (`max-file-size`, `max-nesting`)."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import sub
from typing import Iterable

from .diagnostics import Diagnostic, Location
from .failures import INPUT_LIMIT, failure
from .source import LineIndex
from .suppression import physical_lines  # the tokenizer wants lines that end in \n

# Python itself refuses more than 200 nested brackets ("too many nested parentheses").
DEFAULT_MAX_NESTING = 200
# About 40,000 lines of ordinary code; libcst needs roughly 600 bytes of memory per
# byte of source, and 10 s per MB on a 2-core machine (measured on torch's 1.4 MB
# common_methods_invocations.py: 15 s, 800 MB).
DEFAULT_MAX_FILE_SIZE = 2_000_000

_BRACKET = re.compile(r"[()\[\]{}]")
_NOT_BRACKET_BYTES = bytes(set(range(256)) - set(b"()[]{}"))
# +1 for an opening bracket's byte, -1 for a closing one's (a bracket count in C, not a loop)
_STEP = [0] * 256
for _byte in b"([{":
    _STEP[_byte] = 1
for _byte in b")]}":
    _STEP[_byte] = -1
_OPENING = "([{"


@dataclass(frozen=True)
class InputLimits:
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes
    max_nesting: int = DEFAULT_MAX_NESTING  # brackets


def check_limits(text: str, size: int, filename: str, limits: InputLimits) -> Diagnostic | None:
    """A PH902 diagnostic when the file (`size` bytes on disk) is over a limit."""
    if size > limits.max_file_size:
        return failure(
            INPUT_LIMIT, filename,
            f"The file is {size:,} bytes, over the limit of {limits.max_file_size:,} (`max-file-size`): it was not checked",
        )  # fmt: skip
    where = _too_deep(text, limits.max_nesting)
    if where is not None:
        return failure(
            INPUT_LIMIT, filename,
            f"Brackets nest deeper than {limits.max_nesting} levels here (`max-nesting`): the file was not checked",
            where,
        )  # fmt: skip
    return None


def _too_deep(text: str, limit: int) -> Location | None:
    """Where the nesting first passes `limit`, or None. A count of all brackets (fast,
    and brackets in strings count too) decides most files; only a file whose raw count
    passes the limit is tokenized to count real brackets only."""
    if sum(text.count(c) for c in _OPENING) <= limit:
        return None
    offset = _raw_offset_past(text, limit)
    if offset is None:
        return None
    try:
        return _token_position_past(text, limit)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # Unbalanced or otherwise broken: the raw count is all there is to go on.
        index = LineIndex(text)
        row = index.row_of(offset)
        return Location(row, offset - index.starts[row - 1] + 1)


def _raw_offset_past(text: str, limit: int) -> int | None:
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKET_BYTES)
    counts = list(accumulate(map(_STEP.__getitem__, brackets)))
    if min(counts, default=0) >= 0:
        depths: Iterable[int] = counts
    else:  # a closer with no opener before it (in a string) leaves the depth at 0: the
        # depth is the count less the lowest count so far, where that is below zero
        depths = map(sub, counts, map(min, accumulate(counts, min), repeat(0)))
    if max(depths, default=0) <= limit:
        return None
    depth = 0  # past the limit: where, counted one by one
    for match in _BRACKET.finditer(text):
        if match.group() in _OPENING:
            depth += 1
            if depth > limit:
                return match.start()
        elif depth > 0:
            depth -= 1
    return None


def _token_position_past(text: str, limit: int) -> Location | None:
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO("".join(physical_lines(text))).readline):
        if token.type != tokenize.OP:
            continue
        if token.string in _OPENING:
            depth += 1
            if depth > limit:
                return Location(token.start[0], token.start[1] + 1)
        elif token.string in ")]}" and depth > 0:
            depth -= 1
    return None
