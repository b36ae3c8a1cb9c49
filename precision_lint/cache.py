"""The cache: keyed entries of JSON data, so a second run over an unchanged tree
re-checks nothing.

JSON, not pickle: reading a cache never runs code, whoever wrote it. The file carries a
schema version; an entry that does not decode is dropped (the file is re-checked),
never an error. Writes go to a temporary file that replaces the old one in one step,
merged with what another run saved meanwhile, so concurrent runs never see half a file.
The folder's `.gitignore` and `CACHEDIR.TAG` are written again when missing or empty.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import __version__, rules
from .diagnostics import Diagnostic, from_data, to_data
from .source import content_digest

SCHEMA = 3  # entries carry the module summary and its project dependencies
GITIGNORE = "# Automatically created by precision-lint.\n*\n"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by precision-lint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def content_hash(path: Path) -> str | None:
    try:
        return content_digest(path.read_bytes())
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


class JsonStore:
    """One JSON file of entries by key, under `directory`, for this tool version and
    code. Values are plain JSON data; what they mean is the caller's business."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.file = directory / f"v{__version__}-s{SCHEMA}" / f"{name}-{_code_fingerprint()}.json"
        # a folder holding the project's files is no cache: nothing is read or written there
        self.refused = project_entries(directory)
        self.entries: dict[str, Any] = {} if self.refused else _load(self.file)
        self.changed: dict[str, Any] = {}
        self.dropped: set[str] = set()

    def get(self, key: str) -> Any | None:
        return self.entries.get(key)

    def put(self, key: str, value: Any) -> None:
        self.entries[key] = self.changed[key] = value
        self.dropped.discard(key)

    def drop(self, key: str) -> None:
        self.entries.pop(key, None)
        self.changed.pop(key, None)
        self.dropped.add(key)

    def save(self) -> None:
        """Best effort: a cache that cannot be written only costs speed."""
        if self.refused or (not self.changed and not self.dropped):
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            _ensure_markers(self.directory)
            merged = _load(self.file)  # what other runs saved since we read it
            merged.update(self.changed)
            for key in self.dropped:
                merged.pop(key, None)
            _write_atomically(self.file, json.dumps({"schema": SCHEMA, "entries": merged}, separators=(",", ":")))
        except (OSError, ValueError, TypeError):
            pass


# a folder of one version's entries (`v0.1.0-s3`; earlier layouts `v0.1.0-f2`), and
# what the cache writes in one: its stores and their temporary files
_VERSION_FOLDER = re.compile(r"v\d[\w.+]*-[a-z]\d+")
_STORE_FILE = re.compile(r"\.?[a-z]+-[0-9a-f]+\.(?:json|pickle)(?:\..+\.tmp)?")
# what a project holds and a cache never does: sources, notebooks, configs, git
_PROJECT_FILE = re.compile(r".*\.(?:py|pyi|ipynb|toml|cfg)|\.git")


def project_entries(directory: Path) -> list[str]:
    """What in `directory` is the project's, not a cache's: a Python source, a
    notebook, a config file, `.git`, or a folder that is no version's entries. A cache
    folder holding any (the project itself, named by `cache-dir = "."`) is none: the
    cache keeps out of it (its `.gitignore` of `*` would hide the project from git),
    and `clean` takes only the cache's own entries from it. A stray `.DS_Store` is not
    the project's."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    found = []
    for entry in entries:
        is_folder = entry.is_dir(follow_symlinks=False)
        if _PROJECT_FILE.fullmatch(entry.name) or (is_folder and not _VERSION_FOLDER.fullmatch(entry.name)):
            found.append(entry.name)
    return sorted(found)


def is_version_folder(folder: Path) -> bool:
    """A folder of one version's entries, as the cache writes it (never empty)."""
    if folder.is_symlink() or not _VERSION_FOLDER.fullmatch(folder.name):
        return False
    try:
        children = [child.name for child in folder.iterdir()]
    except OSError:
        return False
    return bool(children) and all(_STORE_FILE.fullmatch(name) for name in children)


def _load(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def _ensure_markers(directory: Path) -> None:
    for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
        path = directory / name
        try:
            if path.stat().st_size > 0:
                continue
        except OSError:
            pass
        _write_atomically(path, text)


def _write_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never a part; a full disk leaves the
    old file (or none), never an empty one."""
    import tempfile  # a run served from the cache writes nothing

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class ResultCache:
    """Each file's diagnostics, keyed by its absolute path, valid for its content hash
    and the enabled rules; with a check's report, the module's summary and what it
    asked of the project index (project/analysis.py checks those answers again)."""

    def __init__(self, directory: Path) -> None:
        self.store = JsonStore(directory, "results")
        self.refused = self.store.refused  # what of the project's the folder holds

    def get(self, path: str, digest: str | None, codes: frozenset[str]) -> list[Diagnostic] | None:
        entry = self.store.get(path)
        if digest is None or not isinstance(entry, dict):
            return None
        if entry.get("digest") != digest or entry.get("codes") != sorted(codes):
            return None
        try:
            diagnostics = entry["diagnostics"]
            if not isinstance(diagnostics, list):
                raise ValueError("diagnostics is not a list")
            return [from_data(item) for item in diagnostics]
        except (KeyError, ValueError):
            self.store.drop(path)  # undecodable: checked again, and replaced
            return None

    def put(self, path: str, digest: str | None, codes: frozenset[str], diagnostics: list[Diagnostic]) -> None:
        if digest is None:
            return
        self.store.put(path, {"digest": digest, "codes": sorted(codes), "diagnostics": [to_data(d) for d in diagnostics]})

    def get_report(self, job):
        """A cached report for a check (or summary) job of runner.py."""
        from .runner import FileReport

        key = _job_key(job)
        entry = self.store.get(key)
        # a notebook's job carries its code cells joined, which is what its report's digest is of
        digest = content_digest(job.data) if job.data is not None else content_hash(Path(job.path))
        if digest is None or not isinstance(entry, dict) or entry.get("digest") != digest or entry.get("codes") != sorted(job.codes):
            return None
        if entry.get("limits") != _limits(job):  # a file past a new limit is refused, not served
            return None
        try:
            diagnostics = [replace(from_data(item), filename=job.path) for item in entry["diagnostics"]]
            summary, dependencies = entry["summary"], entry["dependencies"]
            if not (summary is None or isinstance(summary, dict)) or not isinstance(dependencies, dict):
                raise ValueError("summary or dependencies of the wrong type")
        except (KeyError, TypeError, ValueError):
            self.store.drop(key)  # undecodable: checked again, and replaced
            return None
        return FileReport(job.path, diagnostics, digest=digest, summary=summary, dependencies=dependencies)

    def had_findings(self, job) -> bool:
        """Whether the cached report of an earlier version of the file (the file has
        changed since) had diagnostics: then it likely has them still, and is parsed
        with libcst straight away (engine.py)."""
        entry = self.store.get(_job_key(job))
        return isinstance(entry, dict) and bool(entry.get("diagnostics"))

    def put_report(self, job, report) -> None:
        if report.digest is None or report.failed:  # a failure is never cached: the next run tries again
            return
        self.store.put(_job_key(job), {
            "digest": report.digest, "codes": sorted(job.codes), "limits": _limits(job),
            "diagnostics": [to_data(d) for d in report.diagnostics],
            "summary": report.summary, "dependencies": report.dependencies,
        })  # fmt: skip

    def save(self) -> None:
        self.store.save()


def _limits(job) -> list[int]:
    return [job.limits.max_file_size, job.limits.max_nesting]


def _job_key(job) -> str:
    key = str(Path(job.path).absolute())
    return key if job.mode == "check" else f"{job.mode}:{key}"
