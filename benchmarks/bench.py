"""The one place that measures precision-lint's speed: cold and warm checks of real
repositories, the pre-commit case (a few files handed over by name) and start-up,
each next to `ruff check --select ALL` (output discarded) and TorchFix in the same
run, and the ratios to ruff.

    python benchmarks/bench.py TREE [TREE ...] [--precommit ROOT FILE ...] [--runs 2]
        [--ruff ruff] [--torchfix torchfix | --skip-torchfix] [--markdown OUT.md]

- cold: `check --no-cache`; warm: a second run over the same files with the cache of
  the first (nothing changed). ruff runs `--no-cache` cold and with its own cache warm.
- staged (the pre-commit case only): the warm cache without the files' own entries, as
  when the staged files changed since the last run and the modules they import did not.
- the tools take turns within each round, so a busy machine slows them alike; the best
  of `--runs` rounds is kept. TorchFix runs once (it takes minutes on a large tree).
- start-up: `precision-lint --version` next to `python -c "import json"` and
  `ruff --version`.
- `--scale TREE`: files of 1,000, 10,000 and 100,000 lines made of TREE's modules one
  after another, each checked on its own: time per line and peak memory (the worker's).

Every ratio is to ruff, so a run without it stops at once, naming `--ruff` (one started
without the virtual environment on PATH printed a whole table of empty ratios); TorchFix
must be found too, or left out with `--skip-torchfix`. This is a benchmark,
not a test: nothing here asserts a time; the targets of issue 14 are printed beside
the ratios.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

# issue 14's targets, as the largest ratio to ruff (cold, except where said)
TARGETS = {
    "Megatron-LM cold": 3.0,
    "torchmetrics cold": 4.0,
    "pre-commit cold": 4.0,
    "pre-commit warm": 2.0,
    "--version (x `import json`)": 3.0,
}


# An installed package has its bytecode compiled; a shell that forbids writing it
# (PYTHONDONTWRITEBYTECODE) would make every run compile the tool's modules again.
ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], cwd: Path, timeout: float | None = None) -> tuple[float, float] | None:
    """(wall seconds, CPU seconds) of one run; CPU is user + system time of the
    process and of every process it waited for (the workers), as wait4 reports it:
    on a loaded machine it is the steadier measure of the work done."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENVIRONMENT)
    deadline = None if timeout is None else start + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG if deadline is not None else 0)
        if pid:
            break
        if time.perf_counter() > deadline:
            process.kill()
            process.wait()
            return None
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


CHECKER_IMPORT = "import of the checker (libcst, the model, the rules)"


def ours_command() -> list[str]:
    script = Path(sys.executable).with_name("precision-lint")
    return [str(script)] if script.exists() else [sys.executable, "-m", "precision_lint"]


def count_python(root: Path, files: list[str] | None = None) -> tuple[int, int]:
    paths = [root / f for f in files] if files else [p for p in root.rglob("*.py") if ".git" not in p.parts]
    return len(paths), sum(p.read_bytes().count(b"\n") for p in paths)


class Case:
    """One input: a tree (`targets` = ["."]) or the pre-commit files, with a cache
    folder per tool for the warm runs."""

    def __init__(self, label: str, root: Path, targets: list[str], ruff: str | None) -> None:
        self.label, self.root, self.targets, self.ruff = label, root, targets, ruff
        self.scratch = Path(tempfile.mkdtemp(prefix="precision-lint-bench-"))
        lint = ours_command()
        quiet = ["--exit-zero", "-q", "--output-format", "concise"]
        self.commands: dict[str, list[str]] = {
            "precision-lint cold": [*lint, "check", *self.targets, "--no-cache", *quiet],
            "precision-lint warm": [*lint, "check", *self.targets, "--cache-dir", str(self.scratch / "ours"), *quiet],
        }
        if ruff:
            ruff_args = ["check", "--select", "ALL", "--exit-zero", "-q", "--isolated"]
            self.commands["ruff cold"] = [ruff, *ruff_args, "--no-cache", *self.targets]
            self.commands["ruff warm"] = [ruff, *ruff_args, "--cache-dir", str(self.scratch / "ruff"), *self.targets]
        if targets != ["."]:
            self.commands["precision-lint staged"] = [*lint, "check", *self.targets, "--cache-dir", str(self.scratch / "staged"), *quiet]
        self.best: dict[str, float] = {}  # wall seconds, best of the rounds
        self.cpu: dict[str, float] = {}  # CPU seconds, best of the rounds

    def prepare_staged(self) -> bool:
        """The staged run's cache: the warm one without the targets' reports. False
        (and nothing timed) if the warm cache holds none of them."""
        from precision_lint.cache import ResultCache

        staged = self.scratch / "staged"
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(self.scratch / "ours", staged)
        cache = ResultCache(staged)
        keys = [str(self.root.resolve() / target) for target in self.targets]  # the cache's keys: absolute paths
        held = [key for key in keys if cache.store.get(key) is not None]
        for key in held:
            cache.store.drop(key)
        cache.save()
        return len(held) == len(keys)

    def fill_caches(self) -> None:
        for name in ("precision-lint warm", "ruff warm"):
            if name in self.commands:
                timed(self.commands[name], self.root)

    def round(self) -> None:
        for name, command in self.commands.items():
            if name == "precision-lint staged" and not self.prepare_staged():
                print(f"{self.label}: the warm cache holds no report of the files: staged not timed", file=sys.stderr)
                continue
            measured = timed(command, self.root)
            if measured is not None:
                wall, cpu = measured
                self.best[name] = min(wall, self.best.get(name, wall))
                self.cpu[name] = min(cpu, self.cpu.get(name, cpu))

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", type=Path, help="repositories to check whole, cold and warm")
    parser.add_argument("--precommit", nargs="+", metavar=("ROOT", "FILE"), help="a root folder and the files a pre-commit run hands over")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--ruff", default="ruff", help="ruff executable")
    parser.add_argument("--torchfix", default="torchfix", help="TorchFix executable (in its own environment: it pins an old libcst)")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--torchfix-timeout", type=float, default=3600.0)
    parser.add_argument("--scale", type=Path, metavar="TREE", help="also time 1k, 10k and 100k-line files made of TREE's modules")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args(argv)
    ruff = _which(args.ruff)
    torchfix = None if args.skip_torchfix else _which(args.torchfix)
    if ruff is None:
        parser.error(f"{args.ruff}: not found; every ratio is to ruff: install it, or name it with --ruff")
    if torchfix is None and not args.skip_torchfix:
        parser.error(f"{args.torchfix}: not found; name it with --torchfix, or leave TorchFix out with --skip-torchfix")
    load_before = os.getloadavg()

    cases = [Case(tree.resolve().name, tree.resolve(), ["."], ruff) for tree in args.trees]
    if args.precommit:
        root, files = Path(args.precommit[0]).resolve(), args.precommit[1:]
        cases.append(Case(f"pre-commit ({len(files)} files of {root.name})", root, files, ruff))
    for case in cases:
        case.fill_caches()
    startup: dict[str, float] = {}
    startup_cpu: dict[str, float] = {}
    startup_commands = {
        "precision-lint --version": [*ours_command(), "--version"],
        'python -c "import json"': [sys.executable, "-c", "import json"],
        # what each worker of a cold run imports before its first file
        # (runner._preload_checker): the floor of every cold check, however few its files
        CHECKER_IMPORT: [sys.executable, "-c", "from precision_lint.runner import _preload_checker; _preload_checker()"],
    }
    if ruff:
        startup_commands["ruff --version"] = [ruff, "--version"]
    for _ in range(max(args.runs, 1)):
        for case in cases:
            case.round()
        for _ in range(5):  # start-up is short: more samples
            for name, command in startup_commands.items():
                measured = timed(command, Path.cwd())
                if measured is not None:
                    startup[name] = min(measured[0], startup.get(name, measured[0]))
                    startup_cpu[name] = min(measured[1], startup_cpu.get(name, measured[1]))
    torchfix_times: dict[str, tuple[float, float] | None] = {}
    if torchfix:
        for case in cases:
            torchfix_times[case.label] = timed([torchfix, *case.targets], case.root, args.torchfix_timeout)
    load_after = os.getloadavg()
    load_during = max(load_before[1], load_after[1])  # the 5-minute average: others' work too

    from importlib.metadata import version as installed

    out: list[str] = []
    out.append(
        f"Run {date.today().isoformat()}: {os.cpu_count()} cores, load average {load_before[0]:.1f} before and "
        f"{load_after[0]:.1f} after (5-minute average up to {load_during:.1f}); Python {platform.python_version()}, libcst {installed('libcst')}, "
        f"ruff {_version([ruff, '--version']) if ruff else 'not installed'}, "
        f"TorchFix {_version([torchfix, '--version']) if torchfix else 'not run'}; best of {args.runs} rounds."
    )
    out.append("")
    out.append("Wall seconds (best of the rounds); ratios are precision-lint's time over ruff's cold time (warm over ruff warm in the last column).")
    out.append("")
    out.append("| input | files | lines | precision-lint cold | warm | ruff cold | ruff warm | TorchFix | cold x ruff | warm x ruff cold | warm x ruff warm | cold x TorchFix |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios: dict[str, float] = {}
    cpu_rows: list[str] = []
    precommit_ruff: float | None = None  # ruff's cold time on the pre-commit case
    for case in cases:
        files, lines = count_python(case.root, None if case.targets == ["."] else case.targets)
        b, c = case.best, case.cpu
        names = ("precision-lint cold", "precision-lint warm", "ruff cold", "ruff warm")
        cold, warm, rcold, rwarm = (b.get(k) for k in names)
        ccold, cwarm, crcold, crwarm = (c.get(k) for k in names)
        tf = torchfix_times.get(case.label)
        tf_text = "not run" if case.label not in torchfix_times else (f"{tf[0]:.2f}" if tf is not None else "timed out")
        tf_cpu = "not run" if case.label not in torchfix_times else (f"{tf[1]:.2f}" if tf is not None else "timed out")
        out.append(
            f"| {case.label} | {files:,} | {lines:,} | {_s(cold)} | {_s(warm)} | {_s(rcold)} | {_s(rwarm)} | {tf_text} "
            f"| {_x(cold, rcold)} | {_x(warm, rcold)} | {_x(warm, rwarm)} | {_x(cold, tf[0] if tf else None, 3)} |"
        )
        cpu_rows.append(
            f"| {case.label} | {_s(ccold)} | {_s(cwarm)} | {_s(crcold)} | {_s(crwarm)} | {tf_cpu} "
            f"| {_x(ccold, crcold)} | {_x(cwarm, crcold)} | {_x(cwarm, crwarm)} | {_x(ccold, tf[1] if tf else None, 3)} |"
        )
        key = _target_key(case.label)
        if key == "pre-commit":
            precommit_ruff = rcold
        if cold and rcold:
            ratios[f"{key} cold"] = cold / rcold
        if warm and rwarm:
            ratios[f"{key} warm"] = warm / rwarm
        if ccold and crcold:
            ratios[f"{key} cold (CPU)"] = ccold / crcold
        if cwarm and crwarm:
            ratios[f"{key} warm (CPU)"] = cwarm / crwarm
        case.close()
    out.append("")
    out.append("CPU seconds (user + system, the workers included; best of the rounds): the work done, which a loaded machine disturbs less than wall time.")
    out.append("")
    out.append("| input | precision-lint cold | warm | ruff cold | ruff warm | TorchFix | cold x ruff | warm x ruff cold | warm x ruff warm | cold x TorchFix |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    out.extend(cpu_rows)
    staged = [case for case in cases if "precision-lint staged" in case.best]
    if staged:
        out.append("")
        out.append("Staged: the files changed since a warm run, the modules they import not (the cache without the files' own reports).")
        out.append("")
        out.append("| input | staged wall s | CPU s | x ruff cold | x ruff warm | CPU x ruff cold |")
        out.append("|---|---|---|---|---|---|")
        for case in staged:
            wall, cpu = case.best["precision-lint staged"], case.cpu["precision-lint staged"]
            out.append(
                f"| {case.label} | {wall:.2f} | {cpu:.2f} | {_x(wall, case.best.get('ruff cold'))} "
                f"| {_x(wall, case.best.get('ruff warm'))} | {_x(cpu, case.cpu.get('ruff cold'))} |"
            )
    out.append("")
    out.append("| start-up | wall s | CPU s |")
    out.append("|---|---|---|")
    for name, seconds in startup.items():
        out.append(f"| {name} | {seconds:.3f} | {startup_cpu[name]:.3f} |")
    version, json_start = startup.get("precision-lint --version"), startup.get('python -c "import json"')
    if version and json_start:
        ratios["--version (x `import json`)"] = version / json_start
    version, json_start = startup_cpu.get("precision-lint --version"), startup_cpu.get('python -c "import json"')
    if version and json_start:
        ratios["--version (x `import json`) (CPU)"] = version / json_start
    out.append("")
    out.append("| issue 14 target | wall ratio | CPU ratio | at most | met (wall) |")
    out.append("|---|---|---|---|---|")
    for name, limit in TARGETS.items():
        ratio, cpu_ratio = ratios.get(name), ratios.get(_cpu_key(name))
        met = "" if ratio is None else ("yes" if ratio <= limit else "no")
        out.append(f"| {name} | {'' if ratio is None else f'{ratio:.1f}x'} | {'' if cpu_ratio is None else f'{cpu_ratio:.1f}x'} | {limit:.0f}x | {met} |")
    checker = startup.get(CHECKER_IMPORT)
    if checker and precommit_ruff:
        out.append("")
        out.append(
            f"The floor of a cold check: a worker's import of the checker takes {checker:.3f} s, "
            f"{checker / precommit_ruff:.1f}x ruff's cold time on the pre-commit case."
        )
    if args.scale:
        out.append("")
        out.append("| one file of | precision-lint cold wall s | CPU s | CPU us per line | peak MB |")
        out.append("|---|---|---|---|---|")
        for lines, seconds, cpu, peak in scale(args.scale):
            out.append(f"| {lines:,} lines | {seconds:.2f} | {cpu:.2f} | {cpu / lines * 1e6:.0f} | {peak:.0f} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


def scale(tree: Path, sizes=(1_000, 10_000, 100_000)) -> list[tuple[int, float, float, float]]:
    """(lines, wall seconds, CPU seconds, peak MB of the largest process) of a cold check of one file of each size, made of the
    tree's modules that parse on their own (without `from __future__` lines, which
    must come first)."""
    import ast

    chunks = []
    for path in sorted(tree.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("from __future__"))
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        chunks.append(text if text.endswith("\n") else text + "\n")
        if sum(chunk.count("\n") for chunk in chunks) >= max(sizes):
            break
    results = []
    with tempfile.TemporaryDirectory(prefix="precision-lint-scale-") as scratch:
        folder = Path(scratch)
        (folder / "pyproject.toml").write_text("[tool.precision-lint]\nmax-file-size = 100000000\n")
        for size in sizes:
            text, total = [], 0
            for chunk in chunks:  # whole modules, up to the size
                if total + chunk.count("\n") > size and total:
                    break
                text.append(chunk)
                total += chunk.count("\n")
            target = folder / f"lines_{size}.py"
            target.write_text("".join(text))
            start = time.perf_counter()
            process = subprocess.Popen([*ours_command(), "check", target.name, "--no-cache", "--exit-zero", "-q"], cwd=folder,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENVIRONMENT)  # fmt: skip
            _, _, usage = os.wait4(process.pid, 0)
            results.append((total, time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return results


def _which(name: str) -> str | None:
    """The executable's absolute path (the tools run in other folders), None if absent."""
    found = shutil.which(name)
    return os.path.abspath(found) if found else None


def _s(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds:.2f}"


def _x(ours: float | None, theirs: float | None, digits: int = 1) -> str:
    return "" if not ours or not theirs else f"{ours / theirs:.{digits}f}"


def _target_key(label: str) -> str:
    """The name an input's targets go by: "pre-commit (5 files of ...)" -> "pre-commit",
    a fetched tree "NVIDIA+Megatron-LM" or a checkout "megatron-head" -> "Megatron-LM"."""
    if label.startswith("pre-commit"):
        return "pre-commit"
    name = label.rpartition("+")[2]
    return "Megatron-LM" if name == "megatron-head" else name


def _cpu_key(target: str) -> str:
    """The CPU ratio's key for a target's: "pre-commit warm" -> "pre-commit warm (CPU)"."""
    if target.startswith("--version"):
        return "--version (x `import json`) (CPU)"
    return f"{target} (CPU)"


def _version(command: list[str]) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    words = result.stdout.strip().split()
    return words[-1] if words else "?"


if __name__ == "__main__":
    raise SystemExit(main())
