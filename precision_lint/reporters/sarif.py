"""`--output-format sarif`: SARIF 2.1.0 for GitHub code scanning (upload-sarif)
and other SARIF viewers.

One run; `tool.driver.rules` lists every registered rule, so `ruleIndex` is stable
for a given version. Paths are relative to the repository root and resolved
through `%SRCROOT%` (`originalUriBaseIds`). Regions are 1-based with an exclusive
end column, as SARIF wants; columns count Unicode code points (`columnKind`).
A file that does not parse gets ruleId `syntax-error` and no `ruleIndex`.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

from .. import __version__
from ..diagnostics import Diagnostic, Fix, Location, Related, Severity
from ..registry import all_rules
from ..rule_pages import rule_url
from .github import relative_path

if TYPE_CHECKING:
    from ..rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
SYNTAX_ERROR = "syntax-error"


def _level(severity: Severity) -> str:
    return "error" if severity is Severity.ERROR else "warning"


def _what_it_does(rule: type[Rule]) -> str:
    """The documentation's `## What it does` section as one paragraph (the summary
    when there is none)."""
    match = re.search(r"^## What it does\s*\n(.*?)(?=^## |\Z)", rule.documentation(), re.DOTALL | re.MULTILINE)
    if match is None or not match.group(1).strip():
        return rule.summary
    return " ".join(match.group(1).split())


def rule_descriptor(rule: type[Rule]) -> dict:
    documentation = rule.documentation()
    if rule.checks_suppressions:
        tags = ["maintainability", "suppression"]
    else:
        tags = ["correctness", "numerical-precision"]
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _what_it_does(rule)},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": _level(rule.default_severity)},
        "properties": {"tags": tags, "fixAvailability": rule.fix_availability.value},
    }
    url = rule_url(rule.code)
    if url is not None:  # only a real page: SARIF viewers show it as "learn more"
        descriptor["helpUri"] = url
    return descriptor


def _region(start: Location, end: Location) -> dict:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _artifact(uri: str) -> dict:
    return {"uri": uri, "uriBaseId": SRCROOT}


def _physical(uri: str, start: Location, end: Location) -> dict:
    return {"artifactLocation": _artifact(uri), "region": _region(start, end)}


def _fix(fix: Fix, uri: str) -> dict:
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": _artifact(uri),
                "replacements": [
                    {"deletedRegion": _region(edit.location, edit.end_location), "insertedContent": {"text": edit.content}}
                    for edit in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability.value},
    }


def result(diagnostic: Diagnostic, root: Path, rule_indexes: dict[str, int]) -> dict:
    # A relative URI reference: percent-encode, so that a space or a `:` in the first
    # segment (which would read as a scheme) stays a path.
    uri = quote(relative_path(diagnostic.filename, root), safe="/")
    entry: dict = {"ruleId": diagnostic.code or SYNTAX_ERROR}
    if diagnostic.code in rule_indexes:
        entry["ruleIndex"] = rule_indexes[diagnostic.code]
    entry["level"] = _level(diagnostic.severity)
    if diagnostic.cell is not None:
        return _in_cell(entry, diagnostic, uri)
    entry["message"] = {"text": diagnostic.message}
    entry["locations"] = [{"physicalLocation": _physical(uri, diagnostic.location, diagnostic.end_location)}]
    if diagnostic.related:
        entry["relatedLocations"] = [
            {"id": index, "physicalLocation": _physical(uri, r.location, r.end_location), "message": {"text": r.message}}
            for index, r in enumerate(diagnostic.related, start=1)
        ]
    if diagnostic.fix is not None:
        entry["fixes"] = [_fix(diagnostic.fix, uri)]
    if diagnostic.note:
        entry["properties"] = {"note": diagnostic.note}
    return entry


def _in_cell(entry: dict, diagnostic: Diagnostic, uri: str) -> dict:
    """A notebook's finding: its rows count in its cell, not in the .ipynb file's JSON,
    so the file alone is each location and the messages say the cell and row. A fix
    cannot be placed in the file's JSON either: it is described, for `check --fix`."""
    entry["message"] = {"text": f"{diagnostic.cell_place}: {diagnostic.message}"}
    entry["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(uri)}}]
    if diagnostic.related:
        entry["relatedLocations"] = [
            {"id": index, "physicalLocation": {"artifactLocation": _artifact(uri)}, "message": {"text": f"{_cell_row(r, diagnostic)}: {r.message}"}}
            for index, r in enumerate(diagnostic.related, start=1)
        ]
    properties = {"note": diagnostic.note} if diagnostic.note else {}
    if diagnostic.fix is not None:
        properties["fix"] = {"description": diagnostic.fix.message, "applicability": diagnostic.fix.applicability.value}
    if properties:
        entry["properties"] = properties
    return entry


def _cell_row(related: Related, diagnostic: Diagnostic) -> str:
    return f"cell {related.cell if related.cell is not None else diagnostic.cell}, line {related.location.row}"


def _root_uri(root: Path) -> str:
    uri = Path(root).absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def sarif_log(diagnostics: list[Diagnostic], root: Path) -> dict:
    rules = all_rules()
    rule_indexes = {rule.code: index for index, rule in enumerate(rules)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "precision-lint",
                        "version": __version__,
                        "rules": [rule_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(root)}},
                "columnKind": "unicodeCodePoints",
                "results": [result(d, root, rule_indexes) for d in diagnostics],
            }
        ],
    }


def write(diagnostics: list[Diagnostic], out: TextIO, root: Path) -> None:
    json.dump(sarif_log(diagnostics, root), out, indent=2, ensure_ascii=False)
    out.write("\n")
