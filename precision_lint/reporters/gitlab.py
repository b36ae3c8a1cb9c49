"""`--output-format gitlab`: a GitLab Code Quality report
(`artifacts:reports:codequality`), a JSON list of CodeClimate-style issues.

GitLab matches issues between the base and the merge-request pipeline by
`fingerprint`, so a fingerprint must survive unrelated edits. It hashes the
repository-relative path, the rule code, the message and the finding's occurrence
index among findings with that same path, code and message (ordered by notebook
cell, then position).
The row is left out on purpose: with it, adding a line above a finding would
make GitLab report it as fixed and as new. The cost: two identical findings in a
file swap fingerprints if they swap places, which GitLab cannot tell apart anyway.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TextIO

from ..diagnostics import Diagnostic, Severity
from .github import relative_path

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor"}


def fingerprint(path: str, code: str, message: str, occurrence: int) -> str:
    key = "\0".join((path, code, message, str(occurrence)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def issues(diagnostics: list[Diagnostic], root: Path) -> list[dict]:
    paths = [relative_path(d.filename, root) for d in diagnostics]
    # Occurrence indexes follow position in the file, not input order.
    order = sorted(range(len(diagnostics)), key=lambda i: (paths[i], diagnostics[i].cell or 0, diagnostics[i].location, diagnostics[i].end_location))
    seen: dict[tuple[str, str, str], int] = {}
    fingerprints: dict[int, str] = {}
    for i in order:
        d = diagnostics[i]
        key = (paths[i], d.code or "syntax-error", d.message)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        fingerprints[i] = fingerprint(*key, occurrence)
    return [
        {
            "description": f"({d.code or 'syntax-error'}) {f'{d.cell_place}: ' if d.cell_place else ''}{d.message}",
            "check_name": d.code or "syntax-error",
            "fingerprint": fingerprints[i],
            "severity": _SEVERITY[d.severity],
            # a notebook's rows count in its cell: the file's first line, the cell said
            "location": {"path": paths[i], "lines": {"begin": 1, "end": 1} if d.cell is not None else {"begin": d.location.row, "end": d.end_location.row}},
        }
        for i, d in enumerate(diagnostics)
    ]


def write(diagnostics: list[Diagnostic], out: TextIO, root: Path) -> None:
    json.dump(issues(diagnostics, root), out, indent=2, ensure_ascii=False)
    out.write("\n")
