"""`--diff-base REF`: which lines were added or changed since the branch left REF,
from git: the diff runs from `git merge-base REF HEAD` (so a pull request is never
charged with what its base branch did after it branched, as `git diff REF...`
counts it) to the working tree (so uncommitted edits count as changed). `A...B`
says the same with both ends named; B must be what is checked out (HEAD). Files
git does not track yet are wholly new.

The GitHub Action (action/check.sh) passes `--diff-base origin/BASE` and lets this
module find the merge base, so the Action and any other CI run the same code.
"""
from __future__ import annotations

import re
from pathlib import Path

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class DiffBaseError(Exception):
    pass


# None: every line of the file is new
ChangedLines = dict[Path, "set[int] | None"]


def _git(cwd: Path, *args: str) -> str:
    import subprocess  # only --diff-base runs git: a plain check does not import it

    try:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as error:
        raise DiffBaseError(f"--diff-base needs git, which could not be run: {error}") from error
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise DiffBaseError(f"git {' '.join(args[:2])} failed: {message}")
    return result.stdout.decode("utf-8", "surrogateescape")


def _commit(top: Path, ref: str) -> str:
    try:
        return _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except DiffBaseError as error:
        raise DiffBaseError(f"--diff-base: `{ref}` is not a commit in {top}") from error


def merge_base(top: Path, spec: str) -> str:
    """The commit the diff starts from, for REF or A...B."""
    if ".." in spec and "..." not in spec:
        raise DiffBaseError(f"--diff-base {spec}: give REF or A...B (three dots: from where B left A), not A..B")
    base_ref, _, tip_ref = spec.partition("...")
    base_ref, tip_ref = base_ref or "HEAD", tip_ref or "HEAD"
    base, tip, head = _commit(top, base_ref), _commit(top, tip_ref), _commit(top, "HEAD")
    if tip != head:
        raise DiffBaseError(
            f"--diff-base {spec}: `{tip_ref}` is not HEAD; the files checked are the work tree's, so the range must end at HEAD"
        )
    try:
        return _git(top, "merge-base", base, head).strip()
    except DiffBaseError:
        shallow = _git(top, "rev-parse", "--is-shallow-repository").strip() == "true"
        hint = " This is a shallow clone: fetch the history (actions/checkout with `fetch-depth: 0`)." if shallow else ""
        raise DiffBaseError(f"--diff-base {spec}: `{base_ref}` and HEAD have no common ancestor.{hint}") from None


def changed_lines(ref: str, cwd: Path) -> ChangedLines:
    try:
        top = Path(_git(cwd, "rev-parse", "--show-toplevel").strip())
    except DiffBaseError as error:
        raise DiffBaseError(f"--diff-base needs a git work tree: {error}") from error
    base = merge_base(top, ref)
    changes: ChangedLines = {}
    current: Path | None = None
    diff = _git(top, "-c", "core.quotepath=off", "diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-renames", base, "--")
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = _unquote(line[4:])
            current = None if name == "/dev/null" else (top / name[2:]).resolve()
            if current is not None:
                changes.setdefault(current, set())
        elif current is not None and (match := _HUNK.match(line)):
            start, count = int(match.group(1)), int(match.group(2) or 1)
            lines = changes[current]
            assert lines is not None
            lines.update(range(start, start + count))
    for name in _git(top, "ls-files", "-z", "--others", "--exclude-standard").split("\0"):
        if name:
            changes[(top / name).resolve()] = None
    return changes


def _unquote(name: str) -> str:
    """A path as `git diff` prints it: a tab may end a name with spaces, and names
    with unusual characters are C-quoted (`"b/a\\tb.py"`)."""
    name = name.rstrip("\t")
    if len(name) >= 2 and name[0] == name[-1] == '"':
        raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return raw.encode("latin-1").decode("utf-8", "surrogateescape")
    return name


def touches_changes(rows: list[tuple[int, int]], lines: "set[int] | None") -> bool:
    """Whether any (first_row, last_row) span holds a changed line."""
    if lines is None:
        return True
    return any(row in lines for first, last in rows for row in range(first, last + 1))
