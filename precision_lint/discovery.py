"""Which files to check: files of a known language (`.py`, `.pyi`, `.ipynb` and the
configured `extension`s) under the given paths, minus what each folder's settings
exclude and, inside a git work tree, whatever .gitignore (or .git/info/exclude)
ignores.

`settings` is anything with `settings_for(path)`: a SettingsResolver (each file its
nearest config) or a single Settings (one for all).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .patterns import Groups, absolute, matches_grouped

if TYPE_CHECKING:
    import subprocess


def discover(paths: list[Path], settings, force_exclude: bool = False, unreadable: list[tuple[Path, OSError]] | None = None) -> list[Path]:
    """`unreadable` collects the folders that could not be listed: their files were not
    found, so the run must not say every file was checked."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_file():
            # An explicitly named file is checked unless --force-exclude says otherwise.
            if not (force_exclude and excluded_by_name(path, settings)):
                found[path] = None
            continue
        walk = _Walk(settings, path)
        listed = _git_listed(path)
        if listed is None:
            listed = _plain_walk(path, walk, unreadable)
        # as text, in the order of their Paths: a tree holds thousands of files that
        # are not Python, and making a Path of each cost more than the rest
        for candidate in sorted(listed, key=_parts):
            target = os.path.abspath(candidate)
            if walk.settings_of(os.path.dirname(target)).language(target) and os.path.isfile(candidate) and not walk.excluded(target):
                found[Path(candidate)] = None
    return list(found)


def excluded_by_name(path: Path, settings) -> bool:
    """Whether --force-exclude leaves out a file named on the command line (or the path
    standard input stands for): its settings exclude it, or git ignores it."""
    return _Walk(settings, None).excluded(str(absolute(path))) or _git_ignored(path)


def _parts(path: str) -> list[str]:
    return path.split(os.sep)


class _Walk:
    """Exclusion under one folder named on the command line: a file is excluded when
    its own settings exclude it or when a folder between it and the named one is
    excluded by the settings of the folder that holds it (as a walk would prune it).
    Paths are absolute text."""

    def __init__(self, settings, base: Path | None) -> None:
        self.settings = settings
        self.base = absolute(base) if base is not None else None
        self._base_text = str(self.base)
        self._base_prefix = os.path.join(self._base_text, "")  # strings: Path's `in parents` is slow
        self._folders: dict[str, bool] = {}
        self._settings_of: dict[str, object] = {}  # folder -> the settings of its files
        # id(settings) -> their exclude patterns, grouped: the settings are those
        # _settings_of holds, so each id stays theirs while this walk lives
        self._exclusions: dict[int, Groups] = {}

    def settings_of(self, folder: str):
        """The settings of the files directly in `folder`."""
        if folder not in self._settings_of:
            self._settings_of[folder] = self.settings.settings_for(Path(folder))
        return self._settings_of[folder]

    def excluded(self, path: str) -> bool:
        folder = os.path.dirname(path)
        if self._excluded_by(self.settings_of(folder), path, False):
            return True
        if self.base is None:
            return False
        return self._folder_excluded(folder)

    def _excluded_by(self, settings, path: str, is_dir: bool) -> bool:
        """`settings`: from settings_of."""
        key = id(settings)
        if key not in self._exclusions:
            self._exclusions[key] = settings.exclusions(self.base)
        return matches_grouped(self._exclusions[key], path, is_dir, None if self.base is None else self._base_text)

    def _folder_excluded(self, folder: str) -> bool:
        if self.base is None or folder == self._base_text or not folder.startswith(self._base_prefix):
            return False  # the named folder itself, or outside it
        if folder not in self._folders:
            parent = os.path.dirname(folder)
            self._folders[folder] = self._folder_excluded(parent) or self._excluded_by(self.settings_of(parent), folder, True)
        return self._folders[folder]


def _plain_walk(directory: Path, walk: _Walk, unreadable: list[tuple[Path, OSError]] | None) -> list[str]:
    result = []

    def note(error: OSError) -> None:
        if unreadable is not None:
            unreadable.append((Path(error.filename or directory), error))

    for root, dirs, files in os.walk(directory, onerror=note):
        dirs[:] = sorted(d for d in dirs if not walk._folder_excluded(os.path.abspath(os.path.join(root, d))))
        result.extend(os.path.join(root, name) for name in files)
    return result


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess | None:
    import subprocess  # a run given only files (pre-commit) runs no git

    try:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, check=False)
    except OSError:
        return None  # no git on this machine


def _git_listed(directory: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files, or None outside a work tree."""
    result = _git(directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if result is None or result.returncode != 0:
        return None
    base = str(directory)
    return [os.path.join(base, name) for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def _git_ignored(path: Path) -> bool:
    result = _git(path.parent, "check-ignore", "-q", "--", path.name)
    return result is not None and result.returncode == 0
