"""`precision-lint verify [PATHS]`, `verify --pytest [PATHS] [-- PYTEST_ARGS]`,
`verify --call MODULE:FUNCTION --inputs MODULE:FACTORY`, and the gate behind
`check --fix --verify`. Its options live here; cli.py only calls in.

Importing this module is cheap and never imports torch: the work is imported
when a command runs, and torch only in child processes.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import TextIO

EXIT_PREREQUISITE = 2


class _VerifyParser(argparse.ArgumentParser):
    """Splits `-- PYTEST_ARGS` off before parsing (argparse would drop the `--`)."""

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        rest: list[str] = []
        if "--" in args:
            index = args.index("--")
            args, rest = args[:index], args[index + 1 :]
        namespace, extras = super().parse_known_args(args, namespace)
        namespace.pytest_args = rest
        return namespace, extras


def add_replay_options(parser: argparse.ArgumentParser) -> None:
    """The options `check --fix --verify` shares with `verify`."""
    group = parser.add_argument_group("verify")
    group.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="auto: cuda when available")
    group.add_argument("--world-size", type=int, default=2, help="ranks for replays that all-reduce (default 2)")
    group.add_argument("--seed", type=int, default=0)
    group.add_argument("--scale", type=float, default=1.0, help="start the high run at scale x 8 x the limit")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per replay, or per pytest / --call pass")
    group.add_argument("--memory-limit", type=float, default=8.0, metavar="GB", help="address space per child process (not on cuda)")


def add_verify_parser(commands) -> argparse.ArgumentParser:
    verify = commands.add_parser(
        "verify",
        help="run each fixable finding before and after its fix and compare with the exact count",
        description="Replays each fixable finding (or runs your tests with --pytest, or your function with --call) "
        "before and after its fix, and compares both with an exact shadow count. Everything after `--` goes to pytest.",
    )
    verify.__class__ = _VerifyParser
    verify.add_argument("paths", nargs="*", help="files or folders whose findings to verify (default: .)")
    add_replay_options(verify)
    verify.add_argument("--pytest", action="store_true", help="run your pytest suite with the flagged sites in PATHS instrumented")
    verify.add_argument("--call", metavar="MODULE:FUNCTION", help="run your own function, original and fixed")
    verify.add_argument("--inputs", metavar="MODULE:FACTORY", help="with --call: factory(device) -> (args, kwargs)")
    verify.add_argument("--output-format", choices=("full", "json", "markdown"), default="full")
    verify.add_argument("-o", "--output-file", type=Path, help="write the report to this file instead of stdout")
    verify.add_argument("--plot", metavar="FILE.png", help="plot the error against the exact total, before and after (needs matplotlib)")
    verify.add_argument("--select", action="append", help="rule codes or prefixes to verify")
    verify.add_argument("--config", type=Path, help="pyproject.toml to read instead of the nearest one")
    return verify


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


def verify_paths(paths: list[Path], codes: frozenset[str], settings, options, progress: TextIO | None) -> list:
    from ..discovery import discover
    from .findings import project_findings
    from .runner import _unreadable, verify_findings

    files = discover(paths, settings)
    _progress(progress, f"checking {len(files)} files as one project")
    # as `check` finds them: across modules, settled by the project's evidence
    found, unreadable = project_findings(files, lambda path: settings.codes_for(path, codes), settings.limits)
    results = [_unreadable(path, why) for path, why in unreadable]
    for number, file in enumerate(found, start=1):
        _progress(progress, f"verifying {number}/{len(found)}: {file.path}")
        results.extend(verify_findings(file, options))
    _progress(progress, None)
    return results


def _progress(stream: TextIO | None, text: str | None) -> None:
    if stream is None or not stream.isatty():
        return
    stream.write("\r" + (text or "")[:100].ljust(100) + ("" if text else "\r"))
    stream.flush()


def passing_fixes(paths: list[Path], codes: frozenset[str], settings, options) -> dict[str, set[tuple[str, int, int]]]:
    """For `check --fix --verify`: per file, the findings whose fix may be written."""
    from .verdicts import PASSING

    allowed: dict[str, set[tuple[str, int, int]]] = {}
    for result in verify_paths(paths, codes, settings, options, sys.stderr):
        print(f"verify: {result.path}:{result.line}: {result.verdict}" + (f" ({result.detail})" if result.detail else ""), file=sys.stderr)
        if result.verdict in PASSING:
            allowed.setdefault(str(Path(result.path).resolve()), set()).add((result.code, result.line, result.column))
    return allowed


def verify_command(args) -> int:
    from ..config import find_config, load_settings
    from ..discovery import discover
    from ..selection import validate
    from . import report
    from .verdicts import UNTRUSTED

    problem = prerequisites(args)
    if problem:
        print(f"precision-lint: error: {problem}", file=sys.stderr)
        return EXIT_PREREQUISITE
    cwd = Path.cwd()
    paths = [Path(p) for p in (args.paths or ["."])]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"precision-lint: error: {missing[0]}: No such file or directory", file=sys.stderr)
        return EXIT_PREREQUISITE
    config = args.config if args.config else find_config(paths[0].absolute())
    settings = load_settings(config, cwd)
    if args.select:
        settings.select = validate([s for value in args.select for s in value.split(",")])
    codes = settings.enabled_codes()
    options = options_from(args)
    if args.call:
        from .realmode import verify_call

        spec = _find_module(args.call.partition(":")[0])
        results = verify_call(str(Path(spec.origin).resolve()), args.call, args.inputs, codes, options, lambda text: _progress(sys.stderr, text))
        _progress(sys.stderr, None)
    elif args.pytest:
        from .realmode import verify_pytest

        results = verify_pytest(discover(paths, settings), args.pytest_args, codes, options, lambda text: _progress(sys.stderr, text))
        _progress(sys.stderr, None)
    else:
        results = verify_paths(paths, codes, settings, options, sys.stderr)
    if args.output_file:
        args.output_file.parent.mkdir(parents=True, exist_ok=True)
    out = open(args.output_file, "w", encoding="utf-8") if args.output_file else sys.stdout
    try:
        {"full": report.write_table, "json": report.write_json, "markdown": report.write_markdown}[args.output_format](results, out)
    finally:
        if out is not sys.stdout:
            out.close()
    if args.plot:
        from .plot import write_plot

        write_plot(results, args.plot)
    return 1 if any(r.verdict in UNTRUSTED for r in results) else 0
