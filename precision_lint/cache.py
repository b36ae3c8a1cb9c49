"""Results cached by file content, enabled rules and tool version, so a second run
over an unchanged tree re-checks nothing."""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import replace
from pathlib import Path

from . import __version__, rules
from .diagnostics import Diagnostic

_FORMAT = 2  # entries carry the module summary and its project dependencies


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

    def get_report(self, job):
        """A cached report for a check (or summary) job of runner.py, with the file's
        module summary and what it asked of the project index."""
        from .runner import FileReport

        entry = self.entries.get(self._job_key(job))
        digest = content_hash(Path(job.path))
        if digest is None or entry is None or entry[0] != digest or entry[1] != self._codes_key(job.codes):
            return None
        diagnostics, summary, dependencies = entry[2], entry[3], entry[4]
        # the cache may have been filled from another working directory
        renamed = [replace(d, filename=job.path) for d in diagnostics]
        return FileReport(job.path, renamed, summary=summary, dependencies=dict(dependencies))

    def put_report(self, job, report) -> None:
        digest = content_hash(Path(job.path))
        if digest is None:
            return
        self.entries[self._job_key(job)] = (
            digest, self._codes_key(job.codes), report.diagnostics, report.summary, report.dependencies,
        )  # fmt: skip
        self.dirty = True

    @staticmethod
    def _job_key(job) -> str:
        key = str(Path(job.path).absolute())
        return key if job.mode == "check" else f"{job.mode}:{key}"

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
