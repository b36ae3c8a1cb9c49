"""The command line's grammar: subcommands and their options, grouped in `--help`
the way Ruff groups its own (every option says what it does; a test holds the
README's reference to this)."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from . import __version__

SUBCOMMANDS = ("check", "rule", "verify", "server", "clean")
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif", "markdown", "junit", "gitlab")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=34, width=100)


def folder(value: str) -> Path:
    """A folder named on the command line: an empty name would be the current folder."""
    if not value.strip():
        raise argparse.ArgumentTypeError("a folder's name cannot be empty")
    return Path(value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="precision-lint",
        description="Find and fix numerical-precision hazards in PyTorch code.",
        epilog="`precision-lint PATHS` is `precision-lint check PATHS`; `precision-lint COMMAND --help` for more.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"precision-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _check_parser(commands)

    _verify_parser(commands)

    rule = commands.add_parser("rule", help="print a rule's documentation", formatter_class=_Formatter)
    rule.add_argument("code", nargs="?", help="a rule code (PH001) or name")
    rule.add_argument("--all", action="store_true", help="every rule")
    rule.add_argument("--output-format", choices=("text", "json"), default="text", help="markdown text (default) or JSON")

    server = commands.add_parser("server", help="run the language server (LSP over stdio) for editors", formatter_class=_Formatter)
    server.add_argument("--unsafe-fixes", action="store_true", help="also offer unsafe fixes as quick fixes")

    clean = commands.add_parser(
        "clean", help="remove the caches (.precision-lint-cache) under the current folder", formatter_class=_Formatter
    )
    clean.add_argument("--cache-dir", type=folder, help="also remove this cache folder")
    return parser


def _check_parser(commands) -> None:
    check = commands.add_parser("check", help="check files (the default command)", formatter_class=_Formatter)
    check.add_argument("paths", nargs="*", help="files or folders to check (default: .); - reads stdin")

    fixing = check.add_argument_group("Fixing")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixing.add_argument("--no-fix", dest="fix", action="store_false", help="do not fix (the default; undoes an earlier --fix)")
    fixing.add_argument("--fix-only", action="store_true", help="apply fixes and report only what was fixed; exit 0 unless something failed")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="with --fix, also apply unsafe fixes")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    fixing.add_argument("--show-fixes", action="store_true", help="list what was fixed")
    fixing.add_argument("--verify", action="store_true", help="with --fix: write only fixes whose replay is confirmed or not reproduced")

    selection = check.add_argument_group("Rule selection")
    selection.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes to enable (replaces the config's)")
    selection.add_argument("--extend-select", action="append", metavar="CODES", help="rule codes or prefixes to enable in addition")
    selection.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to disable")
    selection.add_argument("--unfixable", action="append", metavar="CODES", help="rule codes or prefixes never to fix")
    selection.add_argument(
        "--per-file-ignores", action="append", metavar="PATTERN:CODES", help="codes to ignore in files matching PATTERN (replaces the config's)"
    )
    selection.add_argument(
        "--extend-per-file-ignores", action="append", metavar="PATTERN:CODES", help="like --per-file-ignores, in addition to the config's"
    )

    files = check.add_argument_group("File selection")
    files.add_argument("--exclude", action="append", metavar="PATTERNS", help="gitignore-style patterns to exclude (replaces the config's and the defaults)")
    files.add_argument("--extend-exclude", action="append", metavar="PATTERNS", help="more gitignore-style patterns to exclude")
    files.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too")
    files.add_argument("--extension", action="append", metavar="EXT:LANG", help="check files ending in EXT as python, pyi or ipynb (e.g. ipy:ipynb)")
    files.add_argument("--stdin-filename", metavar="PATH", help="the path stdin stands for (config, per-file-ignores, output)")
    files.add_argument("--diff-base", metavar="REF", help="report only findings on lines changed since the merge base of REF and HEAD (or of A...B)")
    files.add_argument("--show-files", action="store_true", help="list the files that would be checked, and stop")

    configuration = check.add_argument_group("Configuration")
    configuration.add_argument(
        "--config", action="append", metavar="FILE|KEY=VALUE",
        help="a config file to use for every path instead of the nearest one, or a TOML `key = value` laid over every config",
    )  # fmt: skip
    configuration.add_argument("--isolated", action="store_true", help="read no config file")
    configuration.add_argument("--show-settings", action="store_true", help="print the settings for the first path and where each comes from, and stop")
    configuration.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    configuration.add_argument("--cache-dir", type=folder, metavar="DIR", help="where to keep the cache (default: .precision-lint-cache)")

    output = check.add_argument_group("Output")
    output.add_argument("--output-format", choices=OUTPUT_FORMATS, default="full", metavar="FORMAT", help=f"one of {', '.join(OUTPUT_FORMATS)} (default: full)")
    output.add_argument("-o", "--output-file", type=Path, metavar="FILE", help="write the report to this file instead of stdout")
    output.add_argument("--statistics", action="store_true", help="count findings per rule (as JSON with --output-format json)")
    output.add_argument("--summary", action="store_true", help="also append a markdown report to $GITHUB_STEP_SUMMARY when it is set")
    output.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour and rule links in terminal output (auto: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it)")
    output.add_argument("-q", "--quiet", action="store_true", help="print findings only: no summary, no progress")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    output.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when anything was fixed")

    suppression = check.add_argument_group("Suppression")
    suppression.add_argument(
        "--add-noqa", nargs="?", const="", default=None, metavar="=REASON",
        help="write `# noqa: CODE` on every line with a finding (with =REASON, the reason follows the codes)",
    )  # fmt: skip
    _add_verify_options(check)


def _verify_parser(commands) -> None:
    verify = commands.add_parser(
        "verify",
        help="run each fixable finding before and after its fix and compare with the exact count",
        description="Replays each fixable finding (or runs your tests with --pytest, or your function with\n"
        "--call) before and after its fix, and compares both with an exact shadow count. Everything\n"
        "after `--` goes to pytest.",
        formatter_class=_Formatter,
    )
    verify.__class__ = _VerifyParser
    verify.add_argument("paths", nargs="*", help="files or folders whose findings to verify (default: .)")

    modes = verify.add_argument_group("Modes (default: replay each finding on inputs made up for it)")
    modes.add_argument("--pytest", action="store_true", help="run your pytest suite with the flagged sites in PATHS instrumented")
    modes.add_argument("--call", metavar="MODULE:FUNCTION", help="run your own function, original and fixed")
    modes.add_argument("--inputs", metavar="MODULE:FACTORY", help="with --call: factory(device) -> (args, kwargs)")

    _add_verify_options(verify)

    configuration = verify.add_argument_group("Configuration")
    configuration.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes to verify (replaces each config's selection)")
    configuration.add_argument("--config", type=Path, metavar="FILE", help="a config file to use for every path instead of each file's nearest one")
    configuration.add_argument("--isolated", action="store_true", help="read no config file")

    output = verify.add_argument_group("Output")
    output.add_argument("--output-format", choices=("full", "json", "markdown"), default="full", help="a table (default), JSON, or markdown")
    output.add_argument("-o", "--output-file", type=Path, metavar="FILE", help="write the report to this file instead of stdout")
    output.add_argument("--plot", metavar="FILE.png", help="plot the error against the exact total, before and after (needs matplotlib)")
    output.add_argument("-q", "--quiet", action="store_true", help="no progress line")


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


def _add_verify_options(parser: argparse.ArgumentParser) -> None:
    """The options `check --fix --verify` shares with `verify`."""
    group = parser.add_argument_group("Verify (with --verify, and for `verify`)")
    group.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where replays run (auto: cuda when available)")
    group.add_argument("--world-size", type=_positive(int), default=2, help="ranks for replays that all-reduce (default 2)")
    group.add_argument("--seed", type=int, default=0, help="seed for the inputs replays make up (default 0)")
    group.add_argument("--scale", type=_positive(float, 1e6), default=1.0, help="start the high run at scale x 8 x the limit (default 1)")
    group.add_argument("--timeout", type=_positive(float, 1e7), default=120.0, help="seconds per replay, or per pytest / --call pass (default 120)")
    group.add_argument("--memory-limit", type=_positive(float, 1e6), default=8.0, metavar="GB", help="address space per child process (not on cuda; default 8)")


def _positive(kind: type, most: float | None = None):
    """An argparse type: a finite number of `kind` above zero (a count, seconds, a
    size), at most `most` (what the run can still use: a timer, an rlimit)."""

    def parse(value: str):
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {value!r}") from None
        if not (number > 0 and math.isfinite(number)):  # also refuses nan and inf
            raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {value}")
        if most is not None and number > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:g}, not {value}")
        return number

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def normalize(argv: list[str]) -> list[str]:
    """`--add-noqa` takes its REASON only as `--add-noqa=REASON` (as Ruff's does), so
    `--add-noqa src/` still names a path."""
    return ["--add-noqa=" if item == "--add-noqa" else item for item in argv]
