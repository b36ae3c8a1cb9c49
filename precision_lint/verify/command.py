"""`precision-lint verify [PATHS]` and the gate behind `check --fix --verify`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..config import ConfigError
from ..discovery import discover
from ..fixer import fix_source
from ..resolver import FileCodes, Overrides, SettingsResolver
from ..selection import validate
from ..source import read_source
from . import report
from .runner import ERROR, FIX_CHANGED, FIX_FAILED, PASSING, SKIPPED, VERIFIABLE, Options, Result, verify_file

UNTRUSTED = frozenset({FIX_FAILED, FIX_CHANGED, ERROR})


def options_from(args) -> Options:
    return Options(device=args.device, world_size=max(1, args.world_size), seed=args.seed, scale=args.scale, timeout=args.timeout)


def verify_paths(paths: list[Path], file_codes: FileCodes, options: Options, enabled: frozenset[str] | None = None, quiet: bool = False) -> list[Result]:
    """Replay the findings of each file under `paths`, with the rules its own nearest
    config enables (of `enabled`, when given). A progress line on a terminal's stderr
    once the run has taken about a second, as `check` shows, unless `quiet`."""
    from ..progress import Progress

    files = discover(paths, file_codes)
    progress = Progress("verified", enabled=not quiet)
    progress.expect(len(files))
    results: list[Result] = []
    try:
        for path in files:
            if file_codes.settings(path).language(path) == "ipynb":
                # said, not passed over: `check` reports the notebook's findings
                results.append(Result("", str(path), 0, 0, verdict=SKIPPED, detail="notebooks are not replayed (copy the cell into a .py file to verify it)"))
            else:
                results.extend(verify_file(path, file_codes.codes_for(str(path), enabled), options))
            progress.advance()
    finally:
        progress.close()
    return results


def passing_fixes(paths: list[Path], enabled: frozenset[str], file_codes: FileCodes, options: Options, quiet: bool = False) -> dict[str, set[tuple[str, int, int]]]:
    """For `check --fix --verify`: per file, the findings whose fix may be written."""
    allowed: dict[str, set[tuple[str, int, int]]] = {}
    for result in verify_paths(paths, file_codes, options, enabled, quiet):
        print(f"verify: {result.path}:{result.line}: {result.verdict}" + (f" ({result.detail})" if result.detail else ""), file=sys.stderr)
        if result.verdict in PASSING:
            allowed.setdefault(str(Path(result.path).resolve()), set()).add((result.code, result.line, result.column))
    return allowed


def verify_command(args) -> int:
    cwd = Path.cwd()
    paths = [Path(p) for p in (args.paths or ["."])]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"precision-lint: error: {missing[0]}: No such file or directory", file=sys.stderr)
        return 2
    if args.isolated and args.config is not None:
        raise ConfigError("--isolated reads no config file: it cannot go with --config FILE")
    if args.config is not None and not args.config.expanduser().is_file():
        raise ConfigError(f"--config {args.config}: no such config file")
    # each file's nearest config, as `check` reads it; --select replaces each one's selection
    select = validate([s for value in args.select for s in value.split(",")]) if args.select else None
    resolver = SettingsResolver(cwd, args.config.expanduser() if args.config else None, args.isolated, Overrides(select=select))
    file_codes = FileCodes(resolver)
    options = options_from(args)
    if args.call:
        results = [_verify_call(args, file_codes, options)]
    else:
        results = verify_paths(paths, file_codes, options, quiet=args.quiet)
    if args.output_file:
        args.output_file.parent.mkdir(parents=True, exist_ok=True)
    out = open(args.output_file, "w", encoding="utf-8") if args.output_file else sys.stdout
    try:
        {"full": report.write_table, "json": report.write_json, "markdown": report.write_markdown}[args.output_format](results, out)
    finally:
        if out is not sys.stdout:
            out.close()
    if args.plot:
        problem = report.write_plot(results, args.plot)
        if problem:
            print(f"precision-lint: error: {problem}", file=sys.stderr)
            return 2
    return 1 if any(r.verdict in UNTRUSTED for r in results) else 0


def _verify_call(args, file_codes: FileCodes, options: Options) -> Result:
    """`--call module:function --inputs module:factory`: run the user's own function as
    written and as fixed (the fixed source executed in the module's namespace)."""
    import importlib.util

    module_name, _, function = args.call.partition(":")
    spec = importlib.util.find_spec(module_name) if module_name else None
    if not function or not args.inputs or spec is None or spec.origin is None:
        return Result("PH001", args.call, 0, 0, verdict="skipped", detail="--call needs MODULE:FUNCTION of an importable module and --inputs MODULE:FACTORY")
    source = read_source(Path(spec.origin))
    fixed = fix_source(source.text, spec.origin, file_codes.codes_for(spec.origin) & VERIFIABLE, unsafe=True)
    result = Result("PH001", spec.origin, 0, 0, function=function, dtype_before="(as written)")
    if not fixed.fixed:
        result.detail = "the module has no fix to compare"
        return result
    result.code = fixed.fixed[0].code or result.code
    result.line, result.column = fixed.fixed[0].location.row, fixed.fixed[0].location.column
    job = {"call": args.call, "inputs": args.inputs, "fixed_source": fixed.source, "module_file": spec.origin, "device": options.device}
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "precision_lint.verify.call"], input=json.dumps(job), capture_output=True, text=True, timeout=options.timeout
        )
    except subprocess.TimeoutExpired:
        result.verdict, result.detail = ERROR, f"the call ran past --timeout {options.timeout:g} s and was stopped"
        return result
    if completed.returncode != 0 or not completed.stdout.strip():
        result.verdict, result.detail = ERROR, (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return result
    output = json.loads(completed.stdout)
    result.device, result.seconds = output.get("device", ""), output.get("seconds", 0.0)
    if "error" in output:
        result.verdict, result.detail = (FIX_FAILED if output.get("variant") == "after" else ERROR), output["error"]
        return result
    result.before, result.after = output["before"], output["after"]
    result.exact = result.after  # the int64 result: exact by construction
    result.abs_error_before, result.abs_error_after = abs(result.before - result.exact), 0
    result.verdict = "confirmed" if result.before != result.after else "not-reproduced"
    result.detail = "exact is the fixed (int64) function's result"
    return result
