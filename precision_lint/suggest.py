""""Did you mean ...?" for a mistyped command, config key or rule code."""
from __future__ import annotations

import os
from typing import Iterable


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The most similar candidate (difflib's ratio, at least 0.6); among equals, the
    one sharing the longest prefix with `word` (`PH01` is `PH001`, not `PH201`)."""
    import difflib

    best: tuple | None = None
    for candidate in sorted(set(candidates)):
        ratio = difflib.SequenceMatcher(None, word, candidate).ratio()
        if ratio < 0.6:
            continue
        key = (ratio, len(os.path.commonprefix([word, candidate])), -abs(len(candidate) - len(word)))
        if best is None or key > best[0]:
            best = (key, candidate)
    return best[1] if best else None


def did_you_mean(word: str, candidates: Iterable[str], quote: str = "'") -> str:
    """`; did you mean 'check'?`, or "" when nothing is close."""
    match = closest(word, candidates)
    return f"; did you mean {quote}{match}{quote}?" if match else ""
