"""Colour and hyperlinks for the terminal: `--color auto|always|never`; with auto,
NO_COLOR (any value) turns colour off, FORCE_COLOR (any value but 0) turns it on,
and otherwise colour follows whether the stream is a terminal (not TERM=dumb).
Hyperlinks (OSC 8, which terminals without support ignore) go with colour."""
from __future__ import annotations

import os
from typing import Mapping, TextIO

_CODES = {"bold": "1", "red": "31", "yellow": "33", "cyan": "36", "green": "32", "dim": "2", "bold_red": "1;31"}


def wants_color(option: str, stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    if option == "always":
        return True
    if option == "never":
        return False
    if environ.get("NO_COLOR"):
        return False
    force = environ.get("FORCE_COLOR")
    if force is not None and force not in ("", "0", "false"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM") != "dumb"


class Style:
    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled

    def paint(self, text: str, kind: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{_CODES[kind]}m{text}\x1b[0m"

    def link(self, text: str, url: str | None) -> str:
        if not self.enabled or not url:
            return text
        return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"


PLAIN = Style(False)
