"""`--output-format json`: Ruff's JSON shape (1-based rows and columns; in a
notebook, `cell` and rows within it), plus our `severity`, `related` and `note`;
`url` is the rule's page (rule_pages.py), null when the package names none."""
from __future__ import annotations

import json
import os
from typing import TextIO

from ..diagnostics import Diagnostic, Location
from ..rule_pages import rule_url


def _location(location: Location) -> dict:
    return {"column": location.column, "row": location.row}


def as_dict(diagnostic: Diagnostic) -> dict:
    fix = None
    if diagnostic.fix is not None:
        fix = {
            "applicability": diagnostic.fix.applicability.value,
            "edits": [
                {"content": e.content, "end_location": _location(e.end_location), "location": _location(e.location)}
                for e in diagnostic.fix.edits
            ],
            "message": diagnostic.fix.message,
        }
    return {
        "cell": diagnostic.cell,
        "code": diagnostic.code,
        "end_location": _location(diagnostic.end_location),
        "filename": diagnostic.filename if diagnostic.filename == "-" else os.path.abspath(diagnostic.filename),  # stdin unnamed
        "fix": fix,
        "location": _location(diagnostic.location),
        "message": diagnostic.message,
        "name": diagnostic.name,
        "noqa_row": diagnostic.noqa_row,
        "note": diagnostic.note,
        "related": [
            {"message": r.message, "location": _location(r.location), "end_location": _location(r.end_location)}
            | ({"cell": r.cell} if r.cell is not None else {})
            for r in diagnostic.related
        ],
        "severity": diagnostic.severity.value,
        "url": diagnostic.url or rule_url(diagnostic.code),
    }


def write_json(diagnostics: list[Diagnostic], out: TextIO) -> None:
    write_document([as_dict(d) for d in diagnostics], out)


def write_document(document, out: TextIO) -> None:
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")
