"""A progress line on stderr (`checked 120/1,344 files`), redrawn in place: only
when stderr is a terminal, only once the run has taken about a second (a fast run
prints nothing), never with --quiet, and erased when the run ends."""
from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY = 1.0  # seconds before the line appears
INTERVAL = 0.1  # at most this often redrawn


class Progress:
    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and bool(isatty and isatty())
        self.total = self.done = 0
        self.started = time.monotonic()
        self.drawn_at: float | None = None
        self.width = 0

    def expect(self, count: int) -> None:
        self.total += count

    def advance(self, _report=None) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < DELAY or (self.drawn_at is not None and now - self.drawn_at < INTERVAL and self.done < self.total):
            return
        line = f"{self.label} {self.done:,}/{self.total:,} files ({now - self.started:.0f} s)"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width, self.drawn_at = len(line), now

    def close(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.drawn_at = None
