"""How verify shows its results: a table, JSON, markdown, and an optional plot."""
from __future__ import annotations

import json
from typing import TextIO

from ..reporters.text import display_path
from .runner import Result

COLUMNS = ("verdict", "location", "function", "dtype", "exact", "before", "after", "error before", "error after", "device", "seconds")


def _row(result: Result) -> tuple[str, ...]:
    def number(value):
        return "" if value is None else f"{value:,}"

    return (
        result.verdict,
        f"{display_path(result.path)}:{result.line}",
        result.function,
        f"{result.dtype_before} -> {result.dtype_after}" if result.dtype_before else "",
        number(result.exact),
        number(result.before),
        number(result.after),
        number(result.abs_error_before),
        number(result.abs_error_after),
        f"{result.device}" + (f" x{result.world_size}" if result.world_size > 1 else ""),
        f"{result.seconds:.1f}",
    )


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
        if result.detail:
            out.write(f"{where}: {result.verdict}: {result.detail}\n")
        for item in result.left_out:
            out.write(f"{where}: left out of the replay: {item}\n")


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
    notes = [(r, r.detail) for r in results if r.detail] + [(r, f"left out: {i}") for r in results for i in r.left_out]
    if notes:
        out.write("\n")
        for result, note in notes:
            escaped = note.replace("|", "\\|")
            out.write(f"- `{display_path(result.path)}:{result.line}`: {escaped}\n")


def write_plot(results: list[Result], path: str) -> str | None:
    """Absolute error against the running exact total, before and after, one line
    each per finding. Returns why not when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "--plot needs matplotlib (pip install matplotlib)"
    figure, axis = plt.subplots(figsize=(8, 4.5))
    for result in results:
        label = f"{display_path(result.path)}:{result.line}"
        for trace, style, name in ((result.trace_before, "-", result.dtype_before), (result.trace_after, "--", "int64")):
            if trace:
                xs = [exact for exact, _ in trace]
                ys = [abs(value - exact) for exact, value in trace]
                axis.plot(xs, ys, style, marker=".", label=f"{label} {name}")
    axis.set_xlabel("running exact total")
    axis.set_ylabel("absolute error of the accumulator")
    axis.set_title("precision-lint verify: before (solid) and after the fix (dashed)")
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return None
