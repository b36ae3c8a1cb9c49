"""Exclude matching for discovery, fast: the answer of `Settings.is_excluded(path,
base)` for every file and folder of a walk, without calling the glob matcher once per
pattern, per form and per path component (64,000 calls on Megatron-LM).

The patterns that stay active under `base` are compiled once into one regular
expression per form of the test (the whole relative path, the path as a folder, its
name, one of its components); a path's relative form and components are computed
once per folder and extended by the name. tests/test_speed.py checks that the answers
are Settings.is_excluded's own.
"""
from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from .config import Settings, _matches


def _any_of(patterns: list[str]) -> re.Pattern | None:
    """One expression that matches where fnmatchcase matches one of `patterns`."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in patterns))


class ExcludeMatcher:
    def __init__(self, settings: Settings, base: Path | None = None) -> None:
        self.settings = settings
        self.base = base
        given = settings.relative(str(base)) if base is not None else None
        patterns = [*settings.exclude, *settings.extend_exclude]
        # a pattern that matches the folder the user named does not apply under it
        active = [p for p in patterns if given is None or not _matches(p, given)]
        stripped = [p.rstrip("/") for p in active]
        self._whole = _any_of(stripped)
        self._inside = _any_of([f"{p}/*" for p in stripped])
        self._name = self._whole  # the same expressions, matched against the last name
        self._part = _any_of(active)
        self._anchors = [settings.root, *([base.absolute()] if base is not None else [])]
        self._folders: dict[str, tuple[str, tuple[str, ...] | None]] = {}

    def excluded(self, path: str) -> bool:
        if self._part is None:
            return False
        folder, name = os.path.split(path)
        if name in ("", ".", "..") or not folder:
            return self.settings.is_excluded(path, self.base)
        relative, parts = self._folder(folder)
        relative = name if relative == "." else (f"{relative}{name}" if relative.endswith("/") else f"{relative}/{name}")
        parts = (name,) if parts is None else (*parts, name)
        return bool(
            self._whole.match(relative)
            or self._inside.match(relative)
            or self._name.match(name)
            or any(self._part.match(part) for part in parts)
        )

    def _folder(self, folder: str) -> tuple[str, tuple[str, ...] | None]:
        """The folder's path relative to the root (as Settings.relative gives it) and
        its components below the deepest anchor (None when no anchor holds it)."""
        known = self._folders.get(folder)
        if known is None:
            absolute = Path(folder).absolute()
            best: tuple[str, ...] | None = None
            for anchor in self._anchors:
                try:
                    parts = absolute.relative_to(anchor).parts
                except ValueError:
                    continue
                if best is None or len(parts) < len(best):
                    best = parts
            known = self._folders[folder] = (self.settings.relative(folder), best)
        return known
