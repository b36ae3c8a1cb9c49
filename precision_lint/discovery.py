"""Which files to check: Python files under the given paths, minus excludes and,
inside a git work tree, whatever .gitignore (or .git/info/exclude) ignores."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .config import Settings
from .exclude import ExcludeMatcher

PYTHON_SUFFIXES = (".py", ".pyi")


def discover(
    paths: list[Path], settings: Settings, force_exclude: bool = False, unreadable: list[tuple[Path, OSError]] | None = None
) -> list[Path]:
    """`unreadable` collects the folders that could not be listed: their files were not
    found, so the run must not say every file was checked."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_file():
            # An explicitly named file is checked unless --force-exclude says otherwise.
            if not (force_exclude and (settings.is_excluded(str(path)) or _git_ignored(path))):
                found[path] = None
            continue
        for candidate in _walk(path, settings, unreadable):
            found[candidate] = None
    return list(found)


def _walk(directory: Path, settings: Settings, unreadable: list[tuple[Path, OSError]] | None) -> list[Path]:
    matcher = ExcludeMatcher(settings, directory)
    listed = _git_listed(directory)
    if listed is None:
        listed = _plain_walk(directory, matcher, unreadable)
    return sorted(
        path
        for path in listed
        if path.suffix in PYTHON_SUFFIXES and path.is_file() and not matcher.excluded(str(path))
    )


def _plain_walk(directory: Path, matcher: ExcludeMatcher, unreadable: list[tuple[Path, OSError]] | None) -> list[Path]:
    result = []

    def note(error: OSError) -> None:
        if unreadable is not None:
            unreadable.append((Path(error.filename or directory), error))

    for root, dirs, files in os.walk(directory, onerror=note):
        dirs[:] = sorted(d for d in dirs if not matcher.excluded(os.path.join(root, d)))
        result.extend(Path(root) / name for name in files)
    return result


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, check=False
        )
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
