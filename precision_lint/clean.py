"""`precision-lint clean`: remove the result caches under the current folder (and
the configured or named cache folder), as `ruff clean` does. Only folders that the
cache itself tagged (its CACHEDIR.TAG) are removed; anything else is left alone."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .cache import CACHEDIR_TAG, GITIGNORE, is_version_folder, project_entries

DEFAULT_NAME = ".precision-lint-cache"


def is_our_cache(folder: Path) -> bool:
    return _reads(folder / "CACHEDIR.TAG") == CACHEDIR_TAG


def caches_under(root: Path) -> list[Path]:
    found = []
    for folder, dirs, _ in os.walk(root):
        here = Path(folder)
        if DEFAULT_NAME in dirs and is_our_cache(here / DEFAULT_NAME):
            found.append(here / DEFAULT_NAME)
        dirs[:] = [d for d in dirs if d not in (".git", DEFAULT_NAME)]
    return found


def clean(root: Path, extra: list[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """(removed, refused, shared): `refused` are named folders that are not our caches;
    `shared` are caches in a folder that holds other files too (the project's root,
    named by `cache-dir = "."`), of which only the cache's own entries are removed."""
    targets = caches_under(root)
    refused = []
    for folder in extra:
        if folder.is_dir() and folder.resolve() not in {t.resolve() for t in targets}:
            # a link is left alone: removing through it would remove what it points at
            (targets if is_our_cache(folder) and not folder.is_symlink() else refused).append(folder)
    removed, shared = [], []
    for folder in targets:
        if project_entries(folder):
            _remove_own_entries(folder)
            shared.append(folder)
        else:
            shutil.rmtree(folder)
            removed.append(folder)
    return removed, refused, shared


def _remove_own_entries(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_symlink():
            continue
        if entry.name == "CACHEDIR.TAG" or (entry.name == ".gitignore" and _reads(entry) == GITIGNORE):
            entry.unlink()
        elif is_version_folder(entry):
            shutil.rmtree(entry)


def _reads(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
