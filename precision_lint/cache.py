"""Results cached by file content, enabled rules and tool version, so a second run
over an unchanged tree re-checks nothing."""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from . import __version__, rules
from .diagnostics import Diagnostic

_FORMAT = 1


def content_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _code_fingerprint() -> str:
    """The tool's own source files (size and mtime): a development install whose rules
    changed must not be served results from the old rules."""
    package = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")) + sorted(Path(rules.__path__[0]).glob("*.py")):
        stat = path.stat()
        digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


class ResultCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.file = directory / f"v{__version__}-f{_FORMAT}" / f"results-{_code_fingerprint()}.pickle"
        self.entries: dict[str, tuple[str, tuple[str, ...], list[Diagnostic]]] = {}
        self.dirty = False
        try:
            with open(self.file, "rb") as stream:
                self.entries = pickle.load(stream)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
            self.entries = {}

    @staticmethod
    def _codes_key(codes: frozenset[str]) -> tuple[str, ...]:
        return tuple(sorted(codes))

    def get(self, path: str, digest: str | None, codes: frozenset[str]) -> list[Diagnostic] | None:
        entry = self.entries.get(path)
        if digest is None or entry is None or entry[0] != digest or entry[1] != self._codes_key(codes):
            return None
        return entry[2]

    def put(self, path: str, digest: str | None, codes: frozenset[str], diagnostics: list[Diagnostic]) -> None:
        if digest is None:
            return
        self.entries[path] = (digest, self._codes_key(codes), diagnostics)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Automatically created by precision-lint.\n*\n")
            handle, temporary = tempfile.mkstemp(dir=self.file.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as stream:
                pickle.dump(self.entries, stream, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.file)
        except OSError:
            pass  # a cache that cannot be written only costs speed
