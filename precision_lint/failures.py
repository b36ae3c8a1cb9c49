"""Diagnostics for a file the linter could not fully check or fix: a crash in the
model or a rule, a fix refused by the guard, an unreadable or unwritable file, an
input over the limits, a checker process that died.

They are reported like findings (with the file and a position) so no output format
can drop them, they are never suppressed or deselected, they are never cached, and
any of them makes the run exit 2: "All checks passed!" cannot stand beside one.
"""
from __future__ import annotations

from .diagnostics import Diagnostic, Location, Severity

INTERNAL_ERROR = ("PH900", "internal-error")
IO_ERROR = ("PH901", "io-error")
INPUT_LIMIT = ("PH902", "input-limit")
CHECKER_CRASH = ("PH903", "checker-crash")

FAILURE_CODES = frozenset(code for code, _ in (INTERNAL_ERROR, IO_ERROR, INPUT_LIMIT, CHECKER_CRASH))


def failure_code_note(written: str) -> str | None:
    """What to say of a failure code given as a rule (`--ignore PH901`): not a hint
    towards the nearest rule's code."""
    if written.strip().upper() not in FAILURE_CODES:
        return None
    return (
        f"`{written.strip()}` is not a rule: PH9xx codes report a file that could not be fully checked"
        " or fixed, and cannot be selected, ignored or suppressed"
    )
REPORT_HINT = "This is a bug in precision-lint: please report it, with the file if you can."


def is_failure(diagnostic: Diagnostic) -> bool:
    return diagnostic.code in FAILURE_CODES


def failure(
    kind: tuple[str, str], filename: str, message: str, location: Location | None = None, note: str | None = None
) -> Diagnostic:
    where = location or Location(1, 1)
    code, name = kind
    return Diagnostic(code, name, message, Severity.ERROR, filename, where, where, note=note)


def internal_error(filename: str, where: str, error: BaseException) -> Diagnostic:
    """`where`: what crashed, e.g. "rule PH006 (float-histogram)" or "the semantic model"."""
    return failure(INTERNAL_ERROR, filename, f"Internal error in {where}: {describe(error)}", note=f"{REPORT_HINT} {_origin(error)}")


def describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__


def _origin(error: BaseException) -> str:
    """The innermost frame of the traceback: enough for a bug report to start from."""
    import traceback  # only a failure needs it

    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    where = "/".join(last.filename.replace("\\", "/").split("/")[-2:])
    return f"(raised at {where}:{last.lineno} in {last.name})"
