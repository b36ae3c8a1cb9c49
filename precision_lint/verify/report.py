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
    """Absolute error against the running exact total, before and after, one panel
    per finding (each with its own x range: the interesting part sits just past the
    dtype's limit). Returns why not when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "--plot needs matplotlib (pip install matplotlib)"
    shown = [r for r in results if r.trace_before or r.trace_after]
    figure, axes = plt.subplots(max(1, len(shown)), 1, figsize=(8, 2.6 * max(1, len(shown))), squeeze=False)
    for axis, result in zip(axes[:, 0], shown):
        for trace, style, name in ((result.trace_before, "-", result.dtype_before), (result.trace_after, "--", "int64")):
            # skip the first point: the big first step, far to the left of the rest
            points = trace[1:] or trace
            axis.plot([e for e, _ in points], [abs(v - e) for e, v in points], style, marker=".", label=name)
        axis.set_title(f"{display_path(result.path)}:{result.line} ({result.function}): {result.verdict}", fontsize="medium")
        axis.set_ylabel("absolute error")
        axis.ticklabel_format(axis="x", style="plain", useOffset=False)
        axis.legend(fontsize="small")
    axes[-1, 0].set_xlabel("running exact total")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return None
