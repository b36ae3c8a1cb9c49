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
    cell: int | None = None  # in a notebook: the cell it is in (rows are that cell's)


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
    # in a notebook: the cell (1-based, counting every cell, as Jupyter and Ruff do);
    # rows and columns are then the cell's own
    cell: int | None = None

    @property
    def noqa_row(self) -> int:
        return self.location.row

    @property
    def cell_suffix(self) -> str:
        """`:cell 3` after a notebook's file name (its rows count in the cell), else ""."""
        return f":cell {self.cell}" if self.cell is not None else ""

    @property
    def cell_place(self) -> str | None:
        """`cell 3, line 1`, said where a format can place a finding only in the file
        (a cell's rows are not the .ipynb file's lines); None outside a notebook."""
        return None if self.cell is None else f"cell {self.cell}, line {self.location.row}"

    def sort_key(self) -> tuple:
        return (self.filename, self.cell or 0, self.location, self.code or "")



# -- plain data (the cache stores diagnostics as JSON) ------------------------------
def to_data(diagnostic: Diagnostic) -> dict:
    def location(where: Location) -> list[int]:
        return [where.row, where.column]

    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "severity": diagnostic.severity.value,
        "filename": diagnostic.filename,
        "location": location(diagnostic.location),
        "end_location": location(diagnostic.end_location),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": fix.message,
            "edits": [[e.content, location(e.location), location(e.end_location)] for e in fix.edits],
        },
        "related": [[r.message, location(r.location), location(r.end_location), r.cell] for r in diagnostic.related],
        "note": diagnostic.note,
        "url": diagnostic.url,
        "conditions": list(diagnostic.conditions),
        "cell": diagnostic.cell,
    }


def from_data(data: dict) -> Diagnostic:
    """The inverse of to_data; raises ValueError on anything that is not its output."""
    try:
        fix = data["fix"]
        return Diagnostic(
            code=_optional(data["code"], str),
            name=_required(data["name"], str),
            message=_required(data["message"], str),
            severity=Severity(data["severity"]),
            filename=_required(data["filename"], str),
            location=_location(data["location"]),
            end_location=_location(data["end_location"]),
            fix=None
            if fix is None
            else Fix(
                Applicability(fix["applicability"]),
                _required(fix["message"], str),
                tuple(Edit(_required(c, str), _location(a), _location(b)) for c, a, b in fix["edits"]),
            ),
            related=tuple(
                Related(_required(m, str), _location(a), _location(b), _optional(rest[0] if rest else None, int))
                for m, a, b, *rest in data["related"]
            ),
            note=_optional(data["note"], str),
            url=_optional(data["url"], str),
            conditions=tuple(_required(c, str) for c in data.get("conditions", ())),
            cell=_optional(data.get("cell"), int),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a diagnostic: {error!r}") from None


def _required(value, kind: type):
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _optional(value, kind: type):
    return None if value is None else _required(value, kind)


def _location(value) -> Location:
    row, column = value
    if type(row) is not int or type(column) is not int or row < 1 or column < 1:
        raise ValueError(f"bad location {value!r}")
    return Location(row, column)
