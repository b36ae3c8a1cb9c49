"""`precision-lint verify [PATHS]`, `verify --pytest [PATHS] [-- PYTEST_ARGS]`,
`verify --call MODULE:FUNCTION --inputs MODULE:FACTORY`, and the gate behind
`check --fix --verify`. Its options are in arguments.py (grouped with the others).

Importing this module is cheap and never imports torch: the work is imported
when a command runs, and torch only in child processes.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TextIO

EXIT_PREREQUISITE = 2


def options_from(args):
    from .runner import Options

    return Options(
        device=args.device, world_size=max(1, args.world_size), seed=args.seed, scale=args.scale,
        timeout=args.timeout, memory_limit_gb=getattr(args, "memory_limit", 8.0),
    )  # fmt: skip


def prerequisites(args) -> str | None:
    """Why verify cannot run as asked, before anything runs (None: it can)."""
    if importlib.util.find_spec("torch") is None:
        return "verify runs torch in child processes, and torch is not installed (pip install torch==2.13.0 for the CPU build)"
    if getattr(args, "plot", None) and importlib.util.find_spec("matplotlib") is None:
        return "--plot needs matplotlib (pip install matplotlib)"
    if getattr(args, "pytest", False) and importlib.util.find_spec("pytest") is None:
        return "--pytest needs pytest installed"
    if getattr(args, "pytest", False) and getattr(args, "call", None):
        return "--pytest and --call are two modes: use one"
    if getattr(args, "call", None):
        module, _, function = args.call.partition(":")
        if not module or not function:
            return "--call needs MODULE:FUNCTION"
        if not args.inputs or ":" not in args.inputs:
            return "--call needs --inputs MODULE:FACTORY (factory(device) returns (args, kwargs))"
        for name in (module, args.inputs.partition(":")[0]):
            if _find_module(name) is None:
                return f"--call: cannot find the module {name!r} (from {Path.cwd()})"
    if getattr(args, "device", "auto") == "cuda":
        import subprocess

        probe = subprocess.run(
            [sys.executable, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"], capture_output=True, text=True
        )
        if probe.returncode != 0:
            return "--device cuda was asked for, but torch sees no CUDA device"
    return None


def _find_module(name: str):
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


NOTEBOOK_SKIPPED = "notebooks are not replayed (copy the cell into a .py file to verify it)"


def verify_paths(paths: list[Path], file_codes, options, enabled: frozenset[str] | None = None, quiet: bool = False) -> list:
    """Replay the findings of the files under `paths`, checked as one project (as
    `check` finds them: across modules, settled by the project's evidence), each file
    with the rules its own nearest config enables (of `enabled`, when given). A
    progress line on a terminal's stderr once the run has taken about a second, as
    `check` shows, unless `quiet`."""
    from ..discovery import discover
    from ..progress import Progress
    from .findings import project_findings
    from .runner import _unreadable, verify_findings

    files = discover(paths, file_codes)
    progress = Progress("verified", enabled=not quiet)
    progress.expect(len(files))
    by_file: dict[Path, list] = {}
    try:
        sources = []
        for path in files:
            if file_codes.settings(path).language(path) == "ipynb":
                # said, not passed over: `check` reports the notebook's findings
                by_file[path] = [_notebook_skipped(path)]
                progress.advance()
            else:
                sources.append(path)
        found, unreadable = project_findings(
            sources, lambda path: file_codes.codes_for(path, enabled), lambda path: file_codes.settings(path).limits
        )
        for path, why in unreadable:
            by_file.setdefault(path, []).append(_unreadable(path, why))
        for _ in range(len(sources) - len(found)):
            progress.advance()  # nothing to replay in them
        for file in found:
            by_file.setdefault(file.path, []).extend(verify_findings(file, options))
            progress.advance()
    finally:
        progress.close()
    return [result for path in files for result in by_file.get(path, [])]


def _notebook_skipped(path: Path):
    from .verdicts import SKIPPED, Result

    return Result("", str(path), 0, 0, verdict=SKIPPED, detail=NOTEBOOK_SKIPPED)


def _progress(stream: TextIO | None, text: str | None) -> None:
    if stream is None or not stream.isatty():
        return
    stream.write("\r" + (text or "")[:100].ljust(100) + ("" if text else "\r"))
    stream.flush()


def passing_fixes(paths: list[Path], enabled: frozenset[str], file_codes, options, quiet: bool = False) -> dict[str, set[tuple[str, int, int]]]:
    """For `check --fix --verify`: per file, the findings whose fix may be written."""
    from .verdicts import PASSING

    allowed: dict[str, set[tuple[str, int, int]]] = {}
    for result in verify_paths(paths, file_codes, options, enabled, quiet):
        print(f"verify: {result.path}:{result.line}: {result.verdict}" + (f" ({result.detail})" if result.detail else ""), file=sys.stderr)
        if result.verdict in PASSING:
            allowed.setdefault(str(Path(result.path).resolve()), set()).add((result.code, result.line, result.column))
    return allowed


def verify_command(args) -> int:
    from ..config import ConfigError
    from ..discovery import discover
    from ..resolver import FileCodes, Overrides, SettingsResolver
    from ..selection import validate
    from . import report
    from .verdicts import UNTRUSTED

    problem = prerequisites(args)
    if getattr(args, "inputs", None) and not getattr(args, "call", None):
        problem = "--inputs gives the arguments of --call's function: it needs --call"
    if problem:
        print(f"precision-lint: error: {problem}", file=sys.stderr)
        return EXIT_PREREQUISITE
    cwd = Path.cwd()
    paths = [Path(p) for p in (args.paths or ["."])]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"precision-lint: error: {missing[0]}: No such file or directory", file=sys.stderr)
        return EXIT_PREREQUISITE
    if args.isolated and args.config is not None:
        raise ConfigError("--isolated reads no config file: it cannot go with --config FILE")
    if args.config is not None and not args.config.expanduser().is_file():
        raise ConfigError(f"--config {args.config}: no such config file")
    # each file's nearest config, as `check` reads it; --select replaces each one's selection
    select = validate([s for value in args.select for s in value.split(",")]) if args.select else None
    resolver = SettingsResolver(cwd, args.config.expanduser() if args.config else None, args.isolated, Overrides(select=select))
    file_codes = FileCodes(resolver)
    options = options_from(args)
    for target in (args.output_file, args.plot):  # found out before the runs, not after
        if target and (problem := _unwritable(Path(target))):
            print(f"precision-lint: error: cannot write {target}: {problem}", file=sys.stderr)
            return EXIT_PREREQUISITE
    stream = None if args.quiet else sys.stderr
    if args.call:
        from .realmode import verify_call

        spec = _find_module(args.call.partition(":")[0])
        results = verify_call(str(Path(spec.origin).resolve()), args.call, args.inputs, file_codes.codes_for, options, lambda text: _progress(stream, text))
        _progress(stream, None)
    elif args.pytest:
        from .realmode import verify_pytest

        files = discover(paths, file_codes)
        notebooks = [path for path in files if file_codes.settings(path).language(path) == "ipynb"]
        sources = [path for path in files if path not in notebooks]
        results = [_notebook_skipped(path) for path in notebooks]
        results += verify_pytest(sources, args.pytest_args, file_codes.codes_for, options, lambda text: _progress(stream, text))
        _progress(stream, None)
    else:
        results = verify_paths(paths, file_codes, options, quiet=args.quiet)
    write = {"full": report.write_table, "json": report.write_json, "markdown": report.write_markdown}[args.output_format]
    try:
        if args.output_file:
            with open(args.output_file, "w", encoding="utf-8") as out:
                write(results, out)
        else:
            write(results, sys.stdout)
        if args.plot:
            from .plot import write_plot

            write_plot(results, args.plot)
    except OSError as error:
        from ..source import why_not_written

        print(f"precision-lint: error: cannot write {error.filename or args.output_file or args.plot}: {why_not_written(error)}", file=sys.stderr)
        return EXIT_PREREQUISITE
    return 1 if any(r.verdict in UNTRUSTED for r in results) else 0


def _unwritable(target: Path) -> str | None:
    """Why a report or plot could not be written at `target` (its folder is made)."""
    from ..source import why_not_written

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return why_not_written(error)
    if target.is_dir():
        return "it is a folder"
    if not os.access(target.parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return "permission denied"
    return None
