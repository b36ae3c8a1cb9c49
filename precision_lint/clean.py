"""`precision-lint clean`: remove the result caches under the current folder (and
the configured or named cache folder), as `ruff clean` does. Only folders that the
cache itself tagged (its CACHEDIR.TAG) are removed; anything else is left alone."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .cache import CACHEDIR_TAG

DEFAULT_NAME = ".precision-lint-cache"


def is_our_cache(folder: Path) -> bool:
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8") == CACHEDIR_TAG
    except (OSError, UnicodeDecodeError):
        return False


def caches_under(root: Path) -> list[Path]:
    found = []
    for folder, dirs, _ in os.walk(root):
        here = Path(folder)
        if DEFAULT_NAME in dirs and is_our_cache(here / DEFAULT_NAME):
            found.append(here / DEFAULT_NAME)
        dirs[:] = [d for d in dirs if d not in (".git", DEFAULT_NAME)]
    return found


def clean(root: Path, extra: list[Path]) -> tuple[list[Path], list[Path]]:
    """(removed, refused): `refused` are named folders that are not our caches."""
    targets = caches_under(root)
    refused = []
    for folder in extra:
        if folder.is_dir() and folder.resolve() not in {t.resolve() for t in targets}:
            (targets if is_our_cache(folder) else refused).append(folder)
    for folder in targets:
        shutil.rmtree(folder)
    return targets, refused
