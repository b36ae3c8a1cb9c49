"""What each command does once cli.py has parsed its arguments: `check` (and its
outputs), `rule` and `clean`; `verify` and `server` live in their own packages.

Exit codes: 0 clean (or everything fixed), 1 findings remain, 2 usage, config or
internal error.
"""
from __future__ import annotations

import argparse
import os
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

from .cache import ResultCache
from .changed_lines import ChangedLines, DiffBaseError, changed_lines, touches_changes
from .failures import INTERNAL_ERROR, IO_ERROR, failure, failure_code_note, is_failure
from .source import BadCodingCookie, SourceChanged, UndecodableSource, decode, read_source, why_not_written, write_text_in_place, write_in_place
from .config import ConfigError, Settings, parse_extension_option
from .diagnostics import Diagnostic
from .discovery import discover, excluded_by_name
from .reporters import github, gitlab, markdown
from .reporters.counts import errors_and_warnings
from .reporters.json_format import write_document, write_json
from .reporters.text import (
    display_path, source_key, statistics, write_concise, write_fixed, write_full, write_statistics, write_summary,
)  # fmt: skip
from .project.analysis import run_project
from .runner import FileReport, Interrupted, Job, Workers, run_jobs, worker_memory
from .selection import UnknownSelector, validate
from .resolver import FileCodes, Overrides, SettingsResolver, parse_per_file_ignore
from .style import Style, wants_color
from .suggest import did_you_mean

if TYPE_CHECKING:
    from .notebook import Notebook

# Formats for machines: a whole document each, no human summary lines around it.
DOCUMENT_WRITERS = {
    "json": lambda diagnostics, out, root: write_json(diagnostics, out),
    "github": github.write,
    "sarif": lambda diagnostics, out, root: _sarif_write(diagnostics, out, root),
    "markdown": markdown.write,
    "junit": lambda diagnostics, out, root: _junit_write(diagnostics, out, root),
    "gitlab": gitlab.write,
}
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it

# Modules that import libcst (the fixer, the noqa writer, SARIF's rule descriptors) are
# imported where they are used: `--version`, `--help`, `rule` and a run served from
# the cache never import it (the rules' texts come from catalog.py, read from source).


def _sarif_write(diagnostics: list[Diagnostic], out: TextIO, root: Path) -> None:
    from .reporters import sarif

    sarif.write(diagnostics, out, root)


def _junit_write(diagnostics: list[Diagnostic], out: TextIO, root: Path) -> None:
    from .reporters import junit  # imports xml.etree: only when asked for

    junit.write(diagnostics, out, root)


def mark_unfixable(diagnostics: list[Diagnostic], unfixable: frozenset[str]) -> list[Diagnostic]:
    if not unfixable:  # nothing to mark: the fixer stays unimported
        return diagnostics
    from .fixer import mark_unfixable as mark

    return mark(diagnostics, unfixable)


def _selectors(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def run_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "rule":
            return _rule_command(args, sys.stdout)
        if args.command == "verify":
            from .verify.command import verify_command  # imports nothing of torch here

            return verify_command(args)
        if args.command == "server":
            from .server import serve  # pygls is imported only here

            return serve(args.unsafe_fixes)
        if args.command == "clean":
            return _clean_command(args)
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




# -- rule, clean -------------------------------------------------------------------
def _rule_command(args: argparse.Namespace, out: TextIO) -> int:
    from .catalog import entry_by_code_or_name as rule_by_code_or_name, rule_entries as all_rules
    from .rule_pages import render, rule_url

    if args.all:
        rules = list(all_rules())
    elif args.code:
        rule = rule_by_code_or_name(args.code)
        if rule is None and (note := failure_code_note(args.code)):
            print(f"precision-lint: error: {note}", file=sys.stderr)
            return EXIT_ERROR
        if rule is None:
            known = [r.code for r in all_rules()] + [r.name for r in all_rules()]
            hint = did_you_mean(args.code if "-" in args.code else args.code.upper(), known, quote="`")
            print(f"precision-lint: error: unknown rule `{args.code}`{hint}", file=sys.stderr)
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
                "url": rule_url(r.code),
            }
            for r in rules
        ]
        json.dump(payload if args.all else payload[0], out, indent=2)
        out.write("\n")
        return EXIT_CLEAN
    out.write("\n".join(render(rule) for rule in rules))
    return EXIT_CLEAN


def _clean_command(args: argparse.Namespace) -> int:
    from .clean import clean

    cwd = Path.cwd()
    configured = SettingsResolver(cwd).settings_for(cwd).cache_dir
    extra = [p for p in (configured, args.cache_dir) if p is not None]
    removed, refused, shared = clean(cwd, [Path(p) for p in extra])
    for folder in removed:
        print(f"Removed {display_path(str(folder))}")
    for folder in shared:
        print(f"Removed the cache's own files from {display_path(str(folder))} (the folder holds other files too: it stays)")
    for folder in refused:
        why = "is a symbolic link (name the folder itself)" if folder.is_symlink() else "is not a precision-lint cache (no CACHEDIR.TAG of ours)"
        print(f"precision-lint: warning: {folder} {why}: left alone", file=sys.stderr)
    if not removed and not shared:
        print("No cache to remove.")
    return EXIT_CLEAN


# -- settings ----------------------------------------------------------------------
def _resolver(args: argparse.Namespace) -> SettingsResolver:
    config_file: Path | None = None
    inline = []
    for value in args.config or []:
        if Path(value).expanduser().is_file():
            if config_file is not None:
                raise ConfigError("--config names one config file (give key = value pairs to change settings)")
            config_file = Path(value).expanduser()
        elif "=" in value:
            inline.append(_inline_toml(value))
        else:
            raise ConfigError(f"--config {value}: no such config file (nor a `key = value` setting)")
    if args.isolated and config_file is not None:
        raise ConfigError("--isolated reads no config file: it cannot go with --config FILE")
    per_file = [parse_per_file_ignore(v) for v in args.per_file_ignores or []]
    extend_per_file = [parse_per_file_ignore(v) for v in args.extend_per_file_ignores or []]
    extension: dict[str, str] = {}
    for value in args.extension or []:
        extension.update(parse_extension_option(value))
    select = _selectors(args.select)
    overrides = Overrides(
        select=None if select is None else validate(select),
        extend_select=validate(_selectors(args.extend_select) or []),
        ignore=validate(_selectors(args.ignore) or []),
        unfixable=validate(_selectors(args.unfixable) or []),
        exclude=_selectors(args.exclude),
        extend_exclude=_selectors(args.extend_exclude) or [],
        per_file_ignores=_merge(per_file) if args.per_file_ignores else None,
        extend_per_file_ignores=_merge(extend_per_file),
        extension=extension,
        cache_dir=args.cache_dir,
        inline=inline,
    )
    return SettingsResolver(Path.cwd(), config_file, args.isolated, overrides)


def _merge(pairs: list[tuple[str, list[str]]]) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for pattern, codes in pairs:
        merged.setdefault(pattern, []).extend(validate(codes))
    return merged


def _inline_toml(value: str) -> dict:
    """`--config "select = ['PH001']"`: one TOML `key = value`, as Ruff takes it."""
    from .config import tomllib

    try:
        table = tomllib.loads(value)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {value!r}: neither a file nor a TOML `key = value` ({error})") from None
    if "extend" in table:  # it would be read relative to no file, and was silently dropped
        raise ConfigError(f"--config {value!r}: `extend` cannot be set on the command line; name the config file with --config FILE")
    return table


# -- check -----------------------------------------------------------------------
def _check_command(args: argparse.Namespace) -> int:
    resolver = _resolver(args)
    codes = FileCodes(resolver)
    if args.show_settings:
        return _show_settings(args, codes)
    if "-" in args.paths or (args.stdin_filename and not args.paths):
        for ignored in (p for p in args.paths if p != "-"):
            print(f"precision-lint: warning: ignoring {ignored}: standard input (`-`) is checked instead", file=sys.stderr)
        return _check_stdin(args, codes)
    if args.stdin_filename:
        print("precision-lint: warning: --stdin-filename is ignored: paths are given (name `-` among them to check standard input)", file=sys.stderr)

    paths = [Path(p) for p in (args.paths or ["."])]
    missing = [p for p in paths if not p.exists()]
    if missing:
        for path in missing:
            print(f"precision-lint: error: {path}: No such file or directory", file=sys.stderr)
        return EXIT_ERROR
    with Workers() as workers:  # one set of worker processes for every round
        settings = codes.settings(paths[0])
        if _checks_every_file_anew(args, settings):
            workers.start(worker_memory(settings.limits.max_file_size))
        return _check_files(args, codes, paths, workers)


def _checks_every_file_anew(args: argparse.Namespace, settings: Settings) -> bool:
    """Whether no file of the run will be served from the cache (--no-cache, a fix,
    no cache yet): its workers can then start before the files are found."""
    if args.show_files or args.verify:
        return False  # nothing is checked, or --verify's replays run first
    if args.no_cache or args.fix or args.fix_only or args.diff:
        return True
    return not _cache_dir(settings).exists()


def _cache_dir(settings: Settings) -> Path:
    return settings.cache_dir or settings.root / ".precision-lint-cache"


def _check_files(args: argparse.Namespace, codes: FileCodes, paths: list[Path], workers: Workers) -> int:
    unlisted: list[tuple[Path, OSError]] = []
    files = discover(paths, codes, force_exclude=args.force_exclude, unreadable=unlisted)
    if args.show_files:
        for path in sorted(files, key=lambda p: str(p.absolute())):
            print(display_path(str(path)))
        return EXIT_CLEAN
    if args.add_noqa is not None and (args.fix or args.diff or args.fix_only):
        raise ConfigError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if args.diff_base and (args.fix or args.diff or args.add_noqa is not None or args.fix_only):
        # it filters what is reported; fixing only changed lines is not what --fix does
        raise ConfigError("--diff-base selects findings to report; it cannot be combined with --fix, --diff or --add-noqa")
    if not files and not unlisted:
        # as Ruff: a warning, not a failure (a pre-commit run may hand over no Python file)
        print("precision-lint: warning: No Python files found under the given path(s)", file=sys.stderr)
        if args.output_format in DOCUMENT_WRITERS and not args.diff:
            return _report(args, [], {})
        return EXIT_CLEAN
    changes = changed_lines(args.diff_base, Path.cwd()) if args.diff_base else None
    fixing = args.fix or args.fix_only
    mode = "diff" if args.diff else ("fix" if fixing else "check")
    gate = None
    if args.verify:
        if mode == "check":
            raise ConfigError("--verify goes with --fix or --diff")
        from .verify.command import options_from, passing_fixes

        union = frozenset().union(*(codes.enabled(codes.settings(f)) for f in files))
        gate = passing_fixes([f for f in files if codes.settings(f).language(f) != "ipynb"], union, codes, options_from(args), args.quiet)
    notebooks: dict[str, "Notebook"] = {}
    jobs: list[Job] = []
    early: list[FileReport] = []
    for f in files:
        file_codes, unfixable, settings = codes.for_file(f)
        data = None
        if settings.language(f) == "ipynb":
            from . import notebook as nb  # only a run with notebooks imports it

            try:
                notebook = nb.read_notebook(f)
            except (OSError, nb.NotebookError) as error:
                early.append(FileReport(str(f), [failure(IO_ERROR, str(f), f"Cannot read the notebook: {getattr(error, 'strerror', None) or error}")]))
                continue
            notebooks[str(f)] = notebook
            data = notebook.source.encode("utf-8")
        allowed = None if gate is None else frozenset(gate.get(str(f.resolve()), set()))
        jobs.append(Job(str(f), file_codes, mode, args.unsafe_fixes, unfixable, allowed, settings.limits, data=data))
    run_settings = codes.settings(paths[0])
    reports = _run(jobs, run_settings, workers, use_cache=mode == "check" and not args.no_cache, quiet=args.quiet)
    unfixable_of = {job.path: job.unfixable for job in jobs}
    texts: dict[str, str] = {}
    for number, report in enumerate(reports):
        if report.path in notebooks:
            reports[number] = _notebook_report(report, notebooks[report.path], mode, texts)
    reports.extend(early)
    for folder, error in unlisted:
        if os.path.exists(folder) and not os.path.isdir(folder):  # named on the command line: a FIFO, a device
            problem = failure(IO_ERROR, str(folder), "Not a regular file (nor a folder): it was not read")
        else:
            problem = failure(IO_ERROR, str(folder), f"Cannot list the folder: {error.strerror or error}; the files in it were not checked")
        reports.append(FileReport(str(folder), [problem]))
    for report in reports:
        report.diagnostics = mark_unfixable(report.diagnostics, unfixable_of.get(report.path, frozenset()))
        if changes is not None:
            report.diagnostics = _only_changed(report.diagnostics, changes)
    if args.add_noqa is not None:
        return _add_noqa(reports, args.add_noqa, notebooks)
    return _report(args, reports, texts)


def _notebook_report(report: FileReport, notebook, mode: str, texts: dict[str, str]) -> FileReport:
    """The report of a notebook's joined module, in cells: its findings placed in
    their cells and, under --fix, its fixes written back into the cells."""
    from . import notebook as nb

    fixed = [nb.in_cells(notebook, d) for d in report.fixed]
    after = notebook
    problem = None
    if report.fixed_text is not None:
        try:
            cells = nb.fixed_cells(notebook, report.fixed_text)
            if mode == "diff":
                report = replace(report, diff=nb.cell_diff(notebook, cells, report.path))
            else:
                data = nb.with_cells(notebook, cells)
                write_in_place(Path(report.path), data, notebook.digest)
                after = nb.read_notebook(Path(report.path), data)
        except nb.NotebookError as error:
            problem = f"The fixes were not written: {error}"
        except SourceChanged:
            problem = "The file changed since it was read: the fixes were not written; run again"
        except OSError as error:
            problem = f"Cannot write the fixed notebook: {error.strerror or error}"
    if problem is not None:
        # nothing was written: what was fixed still stands, in the cells as they are
        remaining = fixed + [failure(IO_ERROR, report.path, problem)]
        fixed = []
    else:
        remaining = [nb.in_cells(after, d) for d in report.diagnostics] if mode != "diff" else [nb.in_cells(notebook, d) for d in report.diagnostics]
    for number, text in nb.cell_texts(after).items():
        texts[source_key(report.path, number)] = text
    return replace(report, diagnostics=remaining, fixed=fixed, fixed_text=None)


def _show_settings(args: argparse.Namespace, codes: FileCodes) -> int:
    from .show_settings import write_settings

    target = args.stdin_filename or (args.paths[0] if args.paths and args.paths[0] != "-" else ".")
    path = Path(target)
    file_codes, _, settings = codes.for_file(path)
    write_settings(str(path.absolute()), settings, file_codes, sys.stdout)
    return EXIT_CLEAN


def _only_changed(diagnostics: list[Diagnostic], changes: ChangedLines) -> list[Diagnostic]:
    kept = []
    for diagnostic in diagnostics:
        if is_failure(diagnostic):
            kept.append(diagnostic)  # the file was not checked: that is never filtered out
            continue
        lines = changes.get(Path(diagnostic.filename).resolve(), set())
        if diagnostic.cell is not None:
            # git's lines are the notebook's JSON lines, not its cells': a changed
            # notebook keeps all its findings, an unchanged one none
            if lines is None or lines:
                kept.append(diagnostic)
            continue
        spans = [(diagnostic.location.row, diagnostic.end_location.row)]
        spans += [(r.location.row, r.end_location.row) for r in diagnostic.related]
        if touches_changes(spans, lines):
            kept.append(diagnostic)
    return kept


def _add_noqa(reports: list[FileReport], reason: str, notebooks: dict) -> int:
    from .noqa_writer import NoqaRefused, add_noqa

    added, failed = 0, False
    for report in reports:
        for problem in (d for d in report.diagnostics if is_failure(d)):
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
            failed = True
        findings = [d for d in report.diagnostics if not is_failure(d)]
        if report.failed or not findings:
            continue
        try:
            if report.path in notebooks:
                count = _add_noqa_to_notebook(notebooks[report.path], findings, reason)
            else:
                source = read_source(Path(report.path))
                text, count = add_noqa(source.text, findings, reason)
                if count:
                    write_text_in_place(Path(report.path), source, text)
            added += count
        except (NoqaRefused, SourceChanged, OSError, ValueError) as error:  # NotebookError too
            kind = INTERNAL_ERROR if isinstance(error, NoqaRefused) else IO_ERROR
            problem = failure(kind, report.path, f"No noqa directive was written: {error}")
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
            failed = True
    print(f"Added {added} noqa directive{'s' if added != 1 else ''}.")
    return EXIT_ERROR if failed else EXIT_CLEAN


def _add_noqa_to_notebook(notebook, findings: list[Diagnostic], reason: str) -> int:
    """The directives go into the joined module (which parses: its magics are
    placeholders), then back into the cells."""
    from . import notebook as nb

    starts = {span.index + 1: span.start_row for span in notebook.spans}
    joined = [
        replace(d, cell=None, location=replace(d.location, row=starts[d.cell] + d.location.row - 1))
        for d in findings
        if d.cell in starts
    ]
    from .noqa_writer import add_noqa

    text, count = add_noqa(notebook.source, joined, reason)
    if count:
        write_in_place(notebook.path, nb.with_cells(notebook, nb.fixed_cells(notebook, text)), notebook.digest)
    return count


def _run(jobs: list[Job], settings: Settings, workers: Workers, use_cache: bool, quiet: bool) -> list[FileReport]:
    from .progress import Progress

    cache = ResultCache(_cache_dir(settings)) if use_cache else None
    if cache is not None and cache.refused:
        print(
            f"precision-lint: warning: the cache folder {display_path(str(_cache_dir(settings)))} holds the project's files"
            f" (such as {cache.refused[0]}): no cache is kept there; the cache needs a folder of its own (cache-dir)",
            file=sys.stderr,
        )
        cache = None
    progress = Progress("checked", enabled=not quiet)

    def runner(batch: list[Job], **options) -> list[FileReport]:
        progress.expect(len(batch))
        return run_jobs(batch, on_report=progress.advance, workers=workers, **options)

    try:
        return run_project(jobs, cache, runner)
    finally:
        progress.close()


def _report(args: argparse.Namespace, reports: list[FileReport], texts: dict[str, str]) -> int:
    return _to_output(args, lambda out: _report_to(args, reports, out, texts))


def _to_output(args: argparse.Namespace, write: Callable[[TextIO], int]) -> int:
    """What `write` returns, having written to -o's file (its folders made) or to
    stdout; a file that cannot be written is a one-line error."""
    if args.output_file is None:
        return write(sys.stdout)
    try:
        args.output_file.parent.mkdir(parents=True, exist_ok=True)
        with open(args.output_file, "w", encoding="utf-8", newline="") as out:
            return write(out)
    except OSError as error:
        print(f"precision-lint: error: cannot write {args.output_file}: {why_not_written(error)}", file=sys.stderr)
        return EXIT_ERROR


def _report_to(args: argparse.Namespace, reports: list[FileReport], out: TextIO, texts: dict[str, str]) -> int:
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
            print(f"Would fix {errors_and_warnings(fixed)}.", file=sys.stderr)
        return EXIT_ERROR if failed else (EXIT_FINDINGS if diffs else EXIT_CLEAN)
    if args.fix_only:
        # as Ruff's --fix-only: what was fixed, and the failures; the rest is not reported
        failures = [d for d in remaining if is_failure(d)]
        for problem in failures:
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
        # a machine format keeps its document (the failures); what was fixed goes to stderr
        document = args.output_format in DOCUMENT_WRITERS
        if document:
            DOCUMENT_WRITERS[args.output_format](failures, out, report_root())
        if not args.quiet:
            said = sys.stderr if document else out
            said.write(f"Fixed {errors_and_warnings(fixed)}.\n" if fixed else "No errors fixed.\n")
            if args.show_fixes:
                write_fixed(fixed, said)
        if failed:
            return EXIT_ERROR
        return EXIT_FINDINGS if args.exit_non_zero_on_fix and fixed else EXIT_CLEAN
    _write_diagnostics(args, remaining, fixed, out, texts)
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
    fixed = [d for r in reports for d in r.fixed]
    print(f"precision-lint: interrupted after {len(reports)} file{'s' if len(reports) != 1 else ''}", file=sys.stderr)
    if fixed:
        write_fixed(fixed, sys.stderr)
    else:
        print("No file was changed.", file=sys.stderr)


def _write_diagnostics(args, remaining: list[Diagnostic], fixed: list[Diagnostic], out: TextIO, texts: dict[str, str] | None = None) -> None:
    if args.statistics:
        if args.output_format == "json":
            write_document(statistics(remaining, args.unsafe_fixes), out)
        else:
            write_statistics(remaining, out, args.unsafe_fixes)
        return
    if args.output_format in DOCUMENT_WRITERS:
        DOCUMENT_WRITERS[args.output_format](remaining, out, report_root())
        return
    style = Style(wants_color(args.color, out))
    if args.output_format == "full":
        write_full(remaining, out, args.unsafe_fixes, texts, style)
    else:
        write_concise(remaining, out, args.unsafe_fixes, style)
    if args.show_fixes:
        write_fixed(fixed, out)
    if not args.quiet:
        write_summary(remaining, fixed, out, args.unsafe_fixes, fixing=args.fix, style=style)


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


def _check_stdin(args, codes: FileCodes) -> int:
    for flag, given in (("--diff-base", args.diff_base), ("--add-noqa", args.add_noqa is not None), ("--verify", args.verify)):
        if given:
            raise ConfigError(f"{flag} works on files, not on stdin")
    filename = args.stdin_filename or "-"
    raw = _read_stdin()
    file_codes, unfixable, settings = codes.for_file(filename)
    if settings.language(filename) == "ipynb":
        raise ConfigError("notebooks cannot be read from standard input; name the .ipynb file instead")
    try:
        source, encoding = decode(raw)
    except UndecodableSource as error:
        raise ConfigError(f"cannot decode standard input (line {error.row}, column {error.column}): {error}") from None
    except BadCodingCookie as error:
        raise ConfigError(f"cannot decode standard input (line {error.lineno}): {error.msg}") from None
    fixing = args.fix or args.fix_only
    if args.force_exclude and args.stdin_filename and excluded_by_name(Path(filename), codes):
        # left out as the file itself would be (pre-commit, an editor): a fix gives the input back
        if fixing:
            sys.stdout.buffer.write(raw)
            sys.stdout.buffer.flush()
        elif not args.diff:
            return _write_stdin_diagnostics(args, [], filename, source)
        return EXIT_CLEAN
    mode = "diff" if args.diff else ("fix" if fixing else "check")
    # one file, as a project: the modules it imports are read from disk
    (report,) = run_project([Job(filename, file_codes, mode, args.unsafe_fixes, unfixable, limits=settings.limits, data=raw)])
    diagnostics = mark_unfixable(report.diagnostics, unfixable)
    failed = any(is_failure(d) for d in diagnostics)
    if args.diff:
        sys.stdout.write(report.diff)
        for problem in (d for d in diagnostics if is_failure(d)):
            print(f"precision-lint: error: {_one_line(problem)}", file=sys.stderr)
        return EXIT_ERROR if failed else (EXIT_FINDINGS if report.diff else EXIT_CLEAN)
    if fixing:
        # The fixed code goes to stdout in stdin's own encoding and newlines.
        text = report.fixed_text if report.fixed_text is not None else source
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode(encoding))
        sys.stdout.buffer.flush()
        for diagnostic in diagnostics if not args.fix_only else [d for d in diagnostics if is_failure(d)]:
            print(_one_line(diagnostic), file=sys.stderr)
        if failed:
            return EXIT_ERROR
        if args.exit_non_zero_on_fix and report.fixed:
            return EXIT_FINDINGS
        if args.fix_only:
            return EXIT_CLEAN
        return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN
    written = _write_stdin_diagnostics(args, diagnostics, filename, source)
    if failed or written == EXIT_ERROR:
        return EXIT_ERROR
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _write_stdin_diagnostics(args, diagnostics: list[Diagnostic], filename: str, source: str) -> int:
    def write(out: TextIO) -> int:
        _write_diagnostics(args, diagnostics, [], out, {filename: source})
        return EXIT_CLEAN

    return _to_output(args, write)


def _read_stdin() -> bytes:
    """Standard input's bytes; a closed or unreadable stdin is a usage error (one line)."""
    stream = getattr(sys.stdin, "buffer", None) if sys.stdin is not None else None
    if stream is None:
        raise ConfigError("cannot read standard input: it is closed")
    try:
        return stream.read()
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read standard input: {getattr(error, 'strerror', None) or error}") from None


def _one_line(diagnostic: Diagnostic) -> str:
    code = f" {diagnostic.code}" if diagnostic.code else ""
    return f"{diagnostic.filename}{diagnostic.cell_suffix}:{diagnostic.location.row}:{diagnostic.location.column}:{code} {diagnostic.message}"
