"""What the linter reports: diagnostics with 1-based positions, and their fixes."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"


class Applicability(Enum):
    """Ruff's fix contract: `--fix` applies safe fixes, `--unsafe-fixes` adds the
    unsafe ones, display-only fixes are never applied."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "displayonly"


@dataclass(frozen=True, order=True)
class Location:
    row: int  # 1-based
    column: int  # 1-based, in characters


@dataclass(frozen=True)
class Edit:
    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    message: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Diagnostic:
    code: str | None  # None for a file that does not parse
    name: str
    message: str
    severity: Severity
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    # Why there is no fix, or what to check before applying it.
    note: str | None = None
    url: str | None = None
    # How the project's precision settings bear on it (conditions.py): resolved
    # before anything is reported, so reporters never see them.
    conditions: tuple[str, ...] = ()

    @property
    def noqa_row(self) -> int:
        return self.location.row

    def sort_key(self) -> tuple:
        return (self.filename, self.location, self.code or "")

