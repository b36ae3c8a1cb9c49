"""`verify --plot`: per finding, the error of the original and of the fixed code
against the exact total, over the whole trajectory (log x, every run from zero to
the start near 8x the limit), with a line at the dtype's limit."""
from __future__ import annotations

from ..reporters.text import display_path
from .verdicts import Result


def write_plot(results: list[Result], path: str) -> None:
    import matplotlib.pyplot as plt

    figure = make_figure(results)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def make_figure(results: list[Result]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = results or []
    figure, axes = plt.subplots(max(1, len(shown)), 1, figsize=(8, 2.8 * max(1, len(shown))), squeeze=False)
    for axis, result in zip(axes[:, 0], shown):
        title = f"{display_path(result.path)}:{result.line} {result.function} ({result.code}): {result.verdict}"
        origin = "synthetic inputs (replay)" if result.mode == "replay" else ("the tests' inputs (pytest)" if result.mode == "pytest" else "your inputs (--call)")
        rank = f"rank {result.rank} of {result.world_size}" if result.world_size > 1 else "1 rank"
        axis.set_title(f"{title}\n{origin}, {rank}, {result.device or 'cpu'}", fontsize="small")
        drawn = False
        for trace, style, color, label in (
            (result.trace_before, "-", "tab:red", f"before ({result.dtype_before or '?'})"),
            (result.trace_after, "--", "tab:blue", f"after ({result.dtype_after})"),
        ):
            for number, segment in enumerate(_runs(trace)):
                points = [(p[0], abs(p[1] - p[0])) for p in segment if p[0] > 0]
                if points:
                    axis.plot([x for x, _ in points], [y for _, y in points], style, color=color, marker=".", markersize=3, label=label if number == 0 else None)
                    drawn = True
        if result.limit:
            axis.axvline(result.limit, color="grey", linestyle=":", label=f"limit {result.limit:,}")
        if drawn:
            axis.set_xscale("log")
            axis.set_yscale("symlog", linthresh=1)
            axis.set_ylim(bottom=0)
            axis.legend(fontsize="x-small")
        else:
            axis.text(0.5, 0.5, result.detail or "no trajectory", ha="center", va="center", fontsize="small", wrap=True, transform=axis.transAxes)
            axis.set_xticks([])
            axis.set_yticks([])
        axis.set_ylabel("|value - exact|", fontsize="small")
    axes[-1, 0].set_xlabel("exact total (log)")
    figure.tight_layout()
    return figure


def _runs(trace: list) -> list[list]:
    """The trajectory of each run (from zero, from below the limit, from near 8x it):
    each begins where the accumulator is created (a `start` point)."""
    runs: list[list] = []
    for point in trace:
        if not runs or (len(point) > 2 and point[2] == "start"):
            runs.append([])
        runs[-1].append(point)
    return runs
