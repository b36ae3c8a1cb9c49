"""How verify shows its results: a table, JSON and markdown. Each says what inputs
were used (synthetic in a replay, the tests' own with --pytest), which scenario
decided, and what was left out. The plot is in plot.py."""
from __future__ import annotations

import json
from typing import TextIO

from ..reporters.text import display_path
from .verdicts import Result

COLUMNS = ("verdict", "location", "function", "mode", "dtype", "exact", "before", "after", "error before", "error after", "max seen", "device", "seconds")


def _number(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.4g}"
    return f"{int(value):,}"


def _row(result: Result) -> tuple[str, ...]:
    return (
        result.verdict,
        f"{display_path(result.path)}:{result.line}",
        result.function,
        result.mode,
        f"{result.dtype_before} -> {result.dtype_after}" if result.dtype_before else "",
        _number(result.exact),
        _number(result.before),
        _number(result.after),
        _number(result.abs_error_before),
        _number(result.abs_error_after),
        _number(result.max_seen),
        f"{result.device}" + (f" x{result.world_size}" if result.world_size > 1 else ""),
        f"{result.seconds:.1f}",
    )


def _notes(result: Result) -> list[str]:
    lines = []
    if result.detail:
        lines.append(f"{result.verdict}: {result.detail}")
    if len(result.scenarios) > 1:
        for scenario in result.scenarios:
            lines.append(f"scenario {scenario['name']}: {scenario['verdict']} ({scenario['detail']})")
    if result.inputs:
        lines.append(f"inputs: {result.inputs}")
    lines.extend(f"left out: {item}" for item in result.left_out)
    lines.extend(f"note: {item}" for item in result.notes)
    return lines


def write_table(results: list[Result], out: TextIO) -> None:
    if not results:
        out.write("Nothing to verify: no finding with a fix.\n")
        return
    rows = [COLUMNS] + [_row(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    for number, row in enumerate(rows):
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
        if number == 0:
            out.write("  ".join("-" * width for width in widths) + "\n")
    out.write("\n")
    for result in results:
        where = f"{display_path(result.path)}:{result.line}"
        for line in _notes(result):
            out.write(f"{where}: {line}\n")


def write_json(results: list[Result], out: TextIO) -> None:
    json.dump([r.as_json() for r in results], out, indent=2)
    out.write("\n")


def write_markdown(results: list[Result], out: TextIO) -> None:
    out.write("## precision-lint verify\n\n")
    if not results:
        out.write("Nothing to verify: no finding with a fix.\n")
        return
    out.write("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n")
    for result in results:
        cells = [cell.replace("|", "\\|") for cell in _row(result)]
        out.write("| " + " | ".join(cells) + " |\n")
    out.write("\n")
    for result in results:
        lines = _notes(result)
        if lines:
            out.write(f"- `{display_path(result.path)}:{result.line}`\n")
            for line in lines:
                out.write("  - " + line.replace("|", "\\|") + "\n")
