"""Command line, shaped like Ruff's: `precision-lint check [PATHS]`, `precision-lint
--fix [PATHS]` as its shorthand, `precision-lint rule CODE`, `precision-lint clean`.

Exit codes: 0 clean (or everything fixed), 1 findings remain, 2 usage, config or
internal error.

This module only parses the arguments: `--version` and `--help` end here, in about
the time Python takes to start. What the commands do is in commands.py.
"""
from __future__ import annotations

import os
import sys

from .arguments import SUBCOMMANDS, build_parser, normalize
from .suggest import closest

EXIT_ERROR = 2

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    argv = normalize(list(sys.argv[1:] if argv is None else argv))
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        mistyped = _mistyped_command(argv[0]) if argv else None
        if mistyped is not None:
            print(f"precision-lint: error: {mistyped}", file=sys.stderr)
            return EXIT_ERROR
        argv.insert(0, "check")
    parser = build_parser()
    args = parser.parse_args(argv)
    from .commands import run_command

    return run_command(args)


def _mistyped_command(word: str) -> str | None:
    """`chek`: a word that names no file but is close to a command."""
    if word.startswith("-") or os.path.exists(word):
        return None
    match = closest(word, SUBCOMMANDS)
    return f"unknown command '{word}'; did you mean '{match}'?" if match else None
