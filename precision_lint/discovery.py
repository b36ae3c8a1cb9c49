"""Which files to check: files of a known language (`.py`, `.pyi`, `.ipynb` and the
configured `extension`s) under the given paths, minus what each folder's settings
exclude and, inside a git work tree, whatever .gitignore (or .git/info/exclude)
ignores.

`settings` is anything with `settings_for(path)`: a SettingsResolver (each file its
nearest config) or a single Settings (one for all).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .patterns import absolute


def discover(paths: list[Path], settings, force_exclude: bool = False, unreadable: list[tuple[Path, OSError]] | None = None) -> list[Path]:
    """`unreadable` collects the folders that could not be listed: their files were not
    found, so the run must not say every file was checked."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_file():
            # An explicitly named file is checked unless --force-exclude says otherwise.
            if not (force_exclude and (_Walk(settings, None).excluded(path) or _git_ignored(path))):
                found[path] = None
            continue
        walk = _Walk(settings, path)
        listed = _git_listed(path)
        if listed is None:
            listed = _plain_walk(path, walk, unreadable)
        for candidate in sorted(listed):
            target = absolute(candidate)  # once: settings_for and excluded() take it as it is
            if settings.settings_for(target).language(candidate) and candidate.is_file() and not walk.excluded(target):
                found[candidate] = None
    return list(found)


class _Walk:
    """Exclusion under one folder named on the command line: a file is excluded when
    its own settings exclude it or when a folder between it and the named one is
    excluded by the settings of the folder that holds it (as a walk would prune it)."""

    def __init__(self, settings, base: Path | None) -> None:
        self.settings = settings
        self.base = absolute(base) if base is not None else None
        self._base_text = str(self.base)
        self._base_prefix = os.path.join(self._base_text, "")  # strings: Path's `in parents` is slow
        self._folders: dict[Path, bool] = {}

    def excluded(self, path: Path) -> bool:
        target = absolute(path)
        if self.settings.settings_for(target).is_excluded(target, self.base):
            return True
        if self.base is None:
            return False
        return self._folder_excluded(target.parent)

    def _folder_excluded(self, folder: Path) -> bool:
        text = str(folder)
        if self.base is None or text == self._base_text or not text.startswith(self._base_prefix):
            return False  # the named folder itself, or outside it
        if folder not in self._folders:
            parent = folder.parent
            self._folders[folder] = self._folder_excluded(parent) or self.settings.settings_for(parent).is_excluded(
                folder, self.base, is_dir=True
            )
        return self._folders[folder]


def _plain_walk(directory: Path, walk: _Walk, unreadable: list[tuple[Path, OSError]] | None) -> list[Path]:
    result = []

    def note(error: OSError) -> None:
        if unreadable is not None:
            unreadable.append((Path(error.filename or directory), error))

    for root, dirs, files in os.walk(directory, onerror=note):
        dirs[:] = sorted(d for d in dirs if not walk._folder_excluded(absolute(os.path.join(root, d))))
        result.extend(Path(root) / name for name in files)
    return result


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, check=False)
    except OSError:
        return None  # no git on this machine


def _git_listed(directory: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files, or None outside a work tree."""
    result = _git(directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if result is None or result.returncode != 0:
        return None
    return [directory / name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def _git_ignored(path: Path) -> bool:
    result = _git(path.parent, "check-ignore", "-q", "--", path.name)
    return result is not None and result.returncode == 0
