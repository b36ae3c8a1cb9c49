"""Command line, shaped like Ruff's: `precision-lint check [PATHS]`, `precision-lint
--fix [PATHS]` as its shorthand, `precision-lint rule CODE`.

Exit codes: 0 clean (or everything fixed), 1 findings remain, 2 usage, config or
internal error.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from . import __version__

# The rest is imported where it is used: `--version` and `--help` end in about the time
# Python takes to start, and `rule` and a run served from the cache never import
# libcst (catalog.py reads what `rule` prints from the rules' source).
if TYPE_CHECKING:
    from .changed_lines import ChangedLines
    from .config import Settings
    from .diagnostics import Diagnostic
    from .runner import FileReport, Job

SUBCOMMANDS = ("check", "rule", "verify", "server")
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif", "markdown", "junit", "gitlab")
# Formats for machines: a whole document each, no human summary lines around it.
DOCUMENT_WRITERS = {
    "json": lambda diagnostics, out, root: _reporter("json_format").write_json(diagnostics, out),
    "github": lambda diagnostics, out, root: _reporter("github").write(diagnostics, out, root),
    "sarif": lambda diagnostics, out, root: _reporter("sarif").write(diagnostics, out, root),
    "markdown": lambda diagnostics, out, root: _reporter("markdown").write(diagnostics, out, root),
    "junit": lambda diagnostics, out, root: _reporter("junit").write(diagnostics, out, root),
    "gitlab": lambda diagnostics, out, root: _reporter("gitlab").write(diagnostics, out, root),
}
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _reporter(name: str):
    return importlib.import_module(f"{__package__}.reporters.{name}")


def mark_unfixable(diagnostics: list[Diagnostic], unfixable: frozenset[str]) -> list[Diagnostic]:
    if not unfixable:  # nothing to mark: the fixer (and libcst) stay unimported
        return diagnostics
    from .fixer import mark_unfixable as mark

    return mark(diagnostics, unfixable)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def _selectors(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="precision-lint",
        description="Find and fix numerical-precision hazards in PyTorch code.",
    )
    parser.add_argument("--version", action="version", version=f"precision-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files (the default command)")
    check.add_argument("paths", nargs="*", help="files or folders to check (default: .); - reads stdin")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--no-fix", dest="fix", action="store_false")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix, also apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    check.add_argument("--show-fixes", action="store_true", help="list what was fixed")
    check.add_argument("--select", action="append", help="rule codes or prefixes to enable (replaces the config's)")
    check.add_argument("--extend-select", action="append", help="rule codes or prefixes to enable in addition")
    check.add_argument("--ignore", action="append", help="rule codes or prefixes to disable")
    check.add_argument("--unfixable", action="append", help="rule codes or prefixes never to fix")
    check.add_argument("--extend-exclude", action="append", help="more file patterns to exclude")
    check.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too")
    check.add_argument("--output-format", choices=OUTPUT_FORMATS, default="full")
    check.add_argument("-o", "--output-file", type=Path, help="write the report to this file instead of stdout")
    check.add_argument("--summary", action="store_true", help="also append a markdown report to $GITHUB_STEP_SUMMARY when it is set")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when anything was fixed")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    check.add_argument("--cache-dir", type=Path, help="where to keep the cache (default: .precision-lint-cache)")
    check.add_argument("--stdin-filename", help="the path stdin stands for (config, per-file-ignores, output)")
    check.add_argument("--config", type=Path, help="pyproject.toml to read instead of the nearest one")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("--diff-base", metavar="REF", help="report only findings on lines added or changed since REF (git)")
    check.add_argument("--add-noqa", action="store_true", help="write `# noqa: CODE` on every line with a finding")
    check.add_argument("--verify", action="store_true", help="with --fix: write only fixes whose replay is confirmed or not reproduced")
    _add_verify_options(check)

    verify = commands.add_parser("verify", help="replay each fixable finding before and after its fix and compare the counts")
    verify.add_argument("paths", nargs="*", help="files or folders (default: .)")
    _add_verify_options(verify)
    verify.add_argument("--output-format", choices=("full", "json", "markdown"), default="full")
    verify.add_argument("-o", "--output-file", type=Path, help="write the report to this file instead of stdout")
    verify.add_argument("--plot", metavar="FILE.png", help="plot absolute error against the running total (needs matplotlib)")
    verify.add_argument("--select", action="append", help="rule codes or prefixes to verify")
    verify.add_argument("--config", type=Path, help="pyproject.toml to read instead of the nearest one")
    verify.add_argument("--call", metavar="MODULE:FUNCTION", help="also run your own function, original and fixed")
    verify.add_argument("--inputs", metavar="MODULE:FACTORY", help="with --call: factory(device) -> (args, kwargs)")

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", nargs="?", help="a rule code (PH001) or name")
    rule.add_argument("--all", action="store_true", help="every rule")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")

    server = commands.add_parser("server", help="run the language server (LSP over stdio) for editors")
    server.add_argument("--unsafe-fixes", action="store_true", help="also offer unsafe fixes as quick fixes")
    return parser


def _add_verify_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("verify")
    group.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="auto: cuda when available")
    group.add_argument("--world-size", type=int, default=2, help="ranks for replays that all-reduce (default 2)")
    group.add_argument("--seed", type=int, default=0)
    group.add_argument("--scale", type=float, default=1.0, help="how far past the exact-integer limit to drive the total")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per replay")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "check")
    parser = build_parser()
    args = parser.parse_args(argv)
    from .changed_lines import DiffBaseError
    from .config import ConfigError
    from .runner import Interrupted
    from .selection import UnknownSelector

    try:
        if args.command == "rule":
            return _rule_command(args, sys.stdout)
        if args.command == "verify":
            from .verify.command import verify_command  # imports nothing of torch here

            return verify_command(args)
        if args.command == "server":
            from .server import serve  # pygls is imported only here

            return serve(args.unsafe_fixes)
        return _check_command(args)
    except (ConfigError, UnknownSelector, DiffBaseError) as error:
        print(f"precision-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, as other CLI tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Interrupted as interrupted:
        _report_interruption(interrupted.reports)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("precision-lint: interrupted; no file was changed", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # exit 2, never 1: an internal error must not look like findings
        import traceback

        print(f"precision-lint: internal error:\n{traceback.format_exc()}", file=sys.stderr)
        return EXIT_ERROR


# -- rule ------------------------------------------------------------------------
def _rule_command(args: argparse.Namespace, out: TextIO) -> int:
    # what the rule classes say, read from their source without importing them
    from .catalog import entry_by_code_or_name as rule_by_code_or_name, rule_entries as all_rules

    if args.all:
        rules = list(all_rules())
    elif args.code:
        rule = rule_by_code_or_name(args.code)
        if rule is None:
            print(f"precision-lint: error: unknown rule `{args.code}`", file=sys.stderr)
            return EXIT_ERROR
        rules = [rule]
    else:
        print("precision-lint: error: give a rule code or --all", file=sys.stderr)
        return EXIT_ERROR
    if args.output_format == "json":
        payload = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "fix": r.fix_availability.value,
                "explanation": r.documentation(),
            }
            for r in rules
        ]
        json.dump(payload if args.all else payload[0], out, indent=2)
        out.write("\n")
        return EXIT_CLEAN
    for rule in rules:
        out.write(f"# {rule.name} ({rule.code})\n\n")
        fix = {"none": "not available", "sometimes": "sometimes available", "always": "always available"}
        out.write(f"Fix is {fix[rule.fix_availability.value]}.\n\n{rule.documentation()}\n\n")
    return EXIT_CLEAN


# -- check -----------------------------------------------------------------------
def _settings(args: argparse.Namespace) -> Settings:
    from .config import ConfigError, find_config, load_settings
    from .selection import validate

    cwd = Path.cwd()
    if args.config is not None:
        if not args.config.is_file():
            raise ConfigError(f"{args.config}: no such config file")
        config_file = args.config
    else:
        start = Path(args.stdin_filename) if args.stdin_filename else None
        if start is None:
            real_paths = [Path(p) for p in args.paths if p != "-"]
            start = real_paths[0] if real_paths else cwd
        config_file = find_config(start.absolute())
    settings = load_settings(config_file, cwd)
    if args.select is not None:
        # As in Ruff, a command-line --select starts a new selection: the config's
        # select, extend-select and ignore no longer apply (its per-file-ignores do).
        settings.select = validate(_selectors(args.select))
        settings.extend_select, settings.ignore = [], []
    settings.extend_select += validate(_selectors(args.extend_select) or [])
    settings.ignore += validate(_selectors(args.ignore) or [])
    settings.unfixable += validate(_selectors(args.unfixable) or [])
    settings.extend_exclude += _selectors(args.extend_exclude) or []
    if args.cache_dir is not None:
        settings.cache_dir = args.cache_dir
    return settings


def _check_command(args: argparse.Namespace) -> int:
    from .changed_lines import changed_lines
    from .config import ConfigError
    from .discovery import discover
    from .failures import IO_ERROR, failure
    from .runner import FileReport, Job

    settings = _settings(args)
    enabled = settings.enabled_codes()
    unfixable = settings.unfixable_codes()
    if "-" in args.paths or (args.stdin_filename and not args.paths):
        return _check_stdin(args, settings, enabled, unfixable)

    paths = [Path(p) for p in (args.paths or ["."])]
    missing = [p for p in paths if not p.exists()]
    if missing:
        for path in missing:
            print(f"precision-lint: error: {path}: No such file or directory", file=sys.stderr)
        return EXIT_ERROR
    unlisted: list[tuple[Path, OSError]] = []
    files = discover(paths, settings, force_exclude=args.force_exclude, unreadable=unlisted)
    if args.add_noqa and (args.fix or args.diff):
        raise ConfigError("--add-noqa cannot be combined with --fix or --diff")
    if args.diff_base and (args.fix or args.diff or args.add_noqa):
        # it filters what is reported; fixing only changed lines is not what --fix does
        raise ConfigError("--diff-base selects findings to report; it cannot be combined with --fix, --diff or --add-noqa")
    changes = changed_lines(args.diff_base, Path.cwd()) if args.diff_base else None
    mode = "diff" if args.diff else ("fix" if args.fix else "check")
    gate = None
    if args.verify:
        if mode == "check":
            raise ConfigError("--verify goes with --fix or --diff")
        from .verify.command import options_from, passing_fixes

        gate = passing_fixes(files, enabled, settings, options_from(args))
    jobs = [
        Job(
            str(f), settings.codes_for(str(f), enabled), mode, args.unsafe_fixes, unfixable,
            None if gate is None else frozenset(gate.get(str(f.resolve()), set())), settings.limits,
        )
        for f in files
    ]
    reports = _run(jobs, settings, use_cache=mode == "check" and not args.no_cache)
    for folder, error in unlisted:
        problem = failure(IO_ERROR, str(folder), f"Cannot list the folder: {error.strerror or error}; the files in it were not checked")
        reports.append(FileReport(str(folder), [problem]))
    for report in reports:
        report.diagnostics = mark_unfixable(report.diagnostics, unfixable)
        if changes is not None:
            report.diagnostics = _only_changed(report.diagnostics, changes)
    if args.add_noqa:
        return _add_noqa(reports)
    return _report(args, reports)


def _only_changed(diagnostics: list[Diagnostic], changes: ChangedLines) -> list[Diagnostic]:
    from .changed_lines import touches_changes
    from .failures import is_failure

    kept = []
    for diagnostic in diagnostics:
        if is_failure(diagnostic):
            kept.append(diagnostic)  # the file was not checked: that is never filtered out
            continue
        lines = changes.get(Path(diagnostic.filename).resolve(), set())
        spans = [(diagnostic.location.row, diagnostic.end_location.row)]
        spans += [(r.location.row, r.end_location.row) for r in diagnostic.related]
        if touches_changes(spans, lines):
            kept.append(diagnostic)
    return kept


def _add_noqa(reports: list[FileReport]) -> int:
    from .failures import INTERNAL_ERROR, IO_ERROR, failure, is_failure
    from .noqa_writer import NoqaRefused, add_noqa
    from .source import SourceChanged, read_source, write_text_in_place

    added, failed = 0, False
    for report in reports:
        for problem in (d for d in report.diagnostics if is_failure(d)):
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
            failed = True
        findings = [d for d in report.diagnostics if not is_failure(d)]
        if report.failed or not findings:
            continue
        try:
            source = read_source(Path(report.path))
            text, count = add_noqa(source.text, findings)
            if count:
                write_text_in_place(Path(report.path), source, text)
                added += count
        except (NoqaRefused, SourceChanged, OSError, ValueError) as error:
            kind = INTERNAL_ERROR if isinstance(error, NoqaRefused) else IO_ERROR
            problem = failure(kind, report.path, f"No noqa directive was written: {error}")
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
            failed = True
    print(f"Added {added} noqa directive{'s' if added != 1 else ''}.")
    return EXIT_ERROR if failed else EXIT_CLEAN


def _run(jobs: list[Job], settings: Settings, use_cache: bool) -> list[FileReport]:
    from .cache import ResultCache
    from .project.analysis import run_project

    cache = ResultCache(settings.cache_dir or settings.root / ".precision-lint-cache") if use_cache else None
    return run_project(jobs, cache)


def _report(args: argparse.Namespace, reports: list[FileReport]) -> int:
    if args.output_file is not None:
        try:
            args.output_file.parent.mkdir(parents=True, exist_ok=True)
            with open(args.output_file, "w", encoding="utf-8", newline="") as out:
                return _report_to(args, reports, out)
        except OSError as error:
            print(f"precision-lint: error: cannot write {args.output_file}: {error}", file=sys.stderr)
            return EXIT_ERROR
    return _report_to(args, reports, sys.stdout)


def _report_to(args: argparse.Namespace, reports: list[FileReport], out: TextIO) -> int:
    from .diagnostics import Diagnostic
    from .failures import is_failure

    remaining = sorted((d for r in reports for d in r.diagnostics), key=Diagnostic.sort_key)
    failed = any(is_failure(d) for d in remaining)
    fixed = [d for r in reports for d in r.fixed]
    if args.diff:
        diffs = [r.diff for r in reports if r.diff]
        for diff in diffs:
            out.write(diff)
        for problem in (d for d in remaining if is_failure(d)):  # the diff alone would hide them
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
        if not args.quiet:
            print(f"Would fix {len(fixed)} error{'s' if len(fixed) != 1 else ''}.", file=sys.stderr)
        return EXIT_ERROR if failed else (EXIT_FINDINGS if diffs else EXIT_CLEAN)
    _write_diagnostics(args, remaining, fixed, out)
    if args.summary:
        _step_summary(remaining)
    if failed:
        return EXIT_ERROR
    if args.exit_non_zero_on_fix and fixed:
        return EXIT_FINDINGS
    if remaining and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _report_interruption(reports: list[FileReport]) -> None:
    """SIGINT: say what was written before it, so nothing changed goes unreported."""
    from .reporters.text import write_fixed

    fixed = [d for r in reports for d in r.fixed]
    print(f"precision-lint: interrupted after {len(reports)} file{'s' if len(reports) != 1 else ''}", file=sys.stderr)
    if fixed:
        write_fixed(fixed, sys.stderr)
    else:
        print("No file was changed.", file=sys.stderr)


def _write_diagnostics(
    args, remaining: list[Diagnostic], fixed: list[Diagnostic], out: TextIO, texts: dict[str, str] | None = None
) -> None:
    from .reporters.text import write_concise, write_fixed, write_full, write_statistics, write_summary

    if args.statistics:
        write_statistics(remaining, out, args.unsafe_fixes)
        return
    if args.output_format in DOCUMENT_WRITERS:
        DOCUMENT_WRITERS[args.output_format](remaining, out, report_root())
        return
    if args.output_format == "full":
        write_full(remaining, out, args.unsafe_fixes, texts)
    else:
        write_concise(remaining, out, args.unsafe_fixes)
    if args.show_fixes:
        write_fixed(fixed, out)
    if not args.quiet:
        write_summary(remaining, len(fixed), out, args.unsafe_fixes, fixing=args.fix)


def report_root() -> Path:
    """What machine formats make paths relative to: the git work tree, else the cwd."""
    import subprocess

    try:
        result = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False)
    except OSError:
        return Path.cwd()
    return Path(result.stdout.strip()) if result.returncode == 0 else Path.cwd()


def _step_summary(diagnostics: list[Diagnostic]) -> None:
    """`--summary`: a markdown report for the GitHub job page, when running there."""
    from .reporters import github, markdown

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as out:
            markdown.write(diagnostics, out, report_root(), blob_url=markdown.github_blob_url(os.environ))
            note = github.summary_note(diagnostics)
            if note:
                out.write(f"\n{note}\n")
    except OSError as error:
        print(f"precision-lint: warning: cannot write the step summary {target}: {error}", file=sys.stderr)


def _check_stdin(args, settings: Settings, enabled, unfixable) -> int:
    from .config import ConfigError
    from .failures import is_failure
    from .project.analysis import run_project
    from .runner import Job
    from .source import BadCodingCookie, UndecodableSource, decode

    for flag, given in (("--diff-base", args.diff_base), ("--add-noqa", args.add_noqa), ("--verify", args.verify)):
        if given:
            raise ConfigError(f"{flag} works on files, not on stdin")
    filename = args.stdin_filename or "-"
    raw = _read_stdin()
    try:
        source, encoding = decode(raw)
    except UndecodableSource as error:
        raise ConfigError(f"cannot decode standard input (line {error.row}, column {error.column}): {error}") from None
    except BadCodingCookie as error:
        raise ConfigError(f"cannot decode standard input (line {error.lineno}): {error.msg}") from None
    codes = settings.codes_for(filename, enabled)
    mode = "diff" if args.diff else ("fix" if args.fix else "check")
    # one file, as a project: the modules it imports are read from disk
    (report,) = run_project([Job(filename, codes, mode, args.unsafe_fixes, unfixable, limits=settings.limits, data=raw)])
    diagnostics = mark_unfixable(report.diagnostics, unfixable)
    failed = any(is_failure(d) for d in diagnostics)
    if args.diff:
        sys.stdout.write(report.diff)
        for problem in (d for d in diagnostics if is_failure(d)):
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
        return EXIT_ERROR if failed else (EXIT_FINDINGS if report.diff else EXIT_CLEAN)
    if args.fix:
        # The fixed code goes to stdout in stdin's own encoding and newlines.
        text = report.fixed_text if report.fixed_text is not None else source
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode(encoding))
        sys.stdout.buffer.flush()
        for diagnostic in diagnostics:
            print(_one_line(diagnostic), file=sys.stderr)
        if failed:
            return EXIT_ERROR
        if args.exit_non_zero_on_fix and report.fixed:
            return EXIT_FINDINGS
        return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN
    if args.output_file is not None:
        args.output_file.parent.mkdir(parents=True, exist_ok=True)
        with open(args.output_file, "w", encoding="utf-8") as out:
            _write_diagnostics(args, diagnostics, [], out, {filename: source})
    else:
        _write_diagnostics(args, diagnostics, [], sys.stdout, {filename: source})
    if failed:
        return EXIT_ERROR
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _read_stdin() -> bytes:
    """Standard input's bytes; a closed or unreadable stdin is a usage error (one line)."""
    from .config import ConfigError

    stream = getattr(sys.stdin, "buffer", None) if sys.stdin is not None else None
    if stream is None:
        raise ConfigError("cannot read standard input: it is closed")
    try:
        return stream.read()
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read standard input: {getattr(error, 'strerror', None) or error}") from None


def _one_line(diagnostic: Diagnostic) -> str:
    code = f" {diagnostic.code}" if diagnostic.code else ""
    return f"{diagnostic.filename}:{diagnostic.location.row}:{diagnostic.location.column}:{code} {diagnostic.message}"
