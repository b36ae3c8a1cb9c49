"""`--output-format markdown`: a summary for a pull-request comment or
`$GITHUB_STEP_SUMMARY`: a count line, a table per rule, then one row per finding.

Locations are plain `path:line:column` text unless `blob_url` is given (for
example from `github_blob_url()`), in which case they link to the lines at that
commit. A PR comment holds at most 65,536 characters: `max_findings` cuts the
findings table and says how many rows were left out.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Mapping, TextIO

from ..diagnostics import Applicability, Diagnostic
from .counts import errors_and_warnings
from .github import relative_path

HEADING = "## precision-lint"

_FIX_LABEL = {
    Applicability.SAFE: "safe",
    Applicability.UNSAFE: "unsafe",
    Applicability.DISPLAY_ONLY: "display only",
}


def cell(text: str) -> str:
    """A table cell: `|` escaped (also inside code spans, per GFM) and line breaks
    kept as `<br>`."""
    text = text.replace("|", "\\|")
    return "<br>".join(part.strip() for part in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _fix_text(diagnostic: Diagnostic) -> str:
    if diagnostic.fix is None:
        return "none"
    return f"{_FIX_LABEL[diagnostic.fix.applicability]}: {diagnostic.fix.message}"


def _fixable(diagnostic: Diagnostic) -> bool:
    return diagnostic.fix is not None and diagnostic.fix.applicability is not Applicability.DISPLAY_ONLY


def github_blob_url(environ: Mapping[str, str]) -> str | None:
    """`https://github.com/OWNER/REPO/blob/SHA` inside GitHub Actions, else None.
    (In a pull_request workflow GITHUB_SHA is the merge commit.)"""
    server, repository, sha = (environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"))
    if not (server and repository and sha):
        return None
    return f"{server.rstrip('/')}/{repository}/blob/{sha}"


def _location(path: str, diagnostic: Diagnostic, blob_url: str | None) -> str:
    text = f"{path}:{diagnostic.location.row}:{diagnostic.location.column}"
    if blob_url is None:
        return f"`{text}`"
    label = text.replace("[", "\\[").replace("]", "\\]")
    lines = f"L{diagnostic.location.row}"
    if diagnostic.end_location.row != diagnostic.location.row:
        lines += f"-L{diagnostic.end_location.row}"
    target = f"{blob_url.rstrip('/')}/{path}".replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{label}]({target}#{lines})"


def write(
    diagnostics: list[Diagnostic],
    out: TextIO,
    root: Path,
    *,
    blob_url: str | None = None,
    max_findings: int | None = None,
) -> None:
    out.write(HEADING + "\n\n")
    if not diagnostics:
        out.write("No findings.\n")
        return
    rows = sorted(
        ((relative_path(d.filename, root), d) for d in diagnostics),
        key=lambda item: (item[0], item[1].location, item[1].code or ""),
    )
    files = len({path for path, _ in rows})
    safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.UNSAFE)
    line = f"Found **{errors_and_warnings(diagnostics)}** in {_plural(files, 'file')}."
    if safe:
        line += f" {safe} fixable with `--fix`."
    if unsafe:
        line += f" {unsafe} more with `--fix --unsafe-fixes`."
    out.write(line + "\n\n")

    counts = Counter((d.code or "syntax-error", d.name) for d in diagnostics)
    fixable = Counter((d.code or "syntax-error", d.name) for d in diagnostics if _fixable(d))
    out.write("| Code | Name | Count | Fixable |\n| --- | --- | ---: | ---: |\n")
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        out.write(f"| {cell(code)} | {cell(name)} | {count} | {fixable[(code, name)]} |\n")

    out.write("\n### Findings\n\n| Location | Code | Message | Fix |\n| --- | --- | --- | --- |\n")
    shown = rows if max_findings is None else rows[:max_findings]
    for path, d in shown:
        message = d.message + (f"\n{d.note}" if d.note else "")
        out.write(
            f"| {cell(_location(path, d, blob_url))} | {cell(d.code or 'syntax-error')} "
            f"| {cell(message)} | {cell(_fix_text(d))} |\n"
        )
    if len(shown) < len(rows):
        out.write(f"\n…and {_plural(len(rows) - len(shown), 'more finding')}, not listed here.\n")
