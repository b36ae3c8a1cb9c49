"""The README cannot drift from the tool: every ```console block in it is run (each
`$ precision-lint ...` line, in a copy of the examples) and must print what the
README shows, and its option table must list exactly the options `check --help`
has. (```text blocks, such as verify's table with its timings, are illustrations.)"""
from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

from precision_lint.arguments import build_parser

README = (REPO / "README.md").read_text(encoding="utf-8")


def console_examples() -> list[tuple[str, str]]:
    examples = []
    for block in re.findall(r"^```console\n(.*?)^```$", README, re.DOTALL | re.MULTILINE):
        command, expected = None, []
        for line in block.splitlines(keepends=True):
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, "".join(expected)))
                command, expected = line[2:].strip(), []
            else:
                expected.append(line)
        if command is not None:
            examples.append((command, "".join(expected)))
    return examples


def test_the_readme_has_runnable_examples():
    commands = [command for command, _ in console_examples()]
    assert "precision-lint check examples/count_zeros.py" in commands
    assert len(commands) >= 2


@pytest.mark.parametrize("command, expected", console_examples(), ids=lambda v: v if v.startswith("precision") else "")
def test_readme_example_prints_what_the_readme_shows(tmp_path, command, expected):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    words = shlex.split(command)
    assert words[0] == "precision-lint"
    result = subprocess.run(
        [sys.executable, "-m", "precision_lint", *words[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout == expected


def _command_parser(name: str) -> argparse.ArgumentParser:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices[name]


def _check_parser() -> argparse.ArgumentParser:
    return _command_parser("check")


def test_the_option_table_matches_check_help():
    section = README[README.index("## Command line") : README.index("## Configuration")]
    table = section[section.index("| option | meaning |") :].split("\n\n")[0]
    documented = {
        option
        for row in table.splitlines()[2:]
        for option in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", row.split("|")[1])
    }
    options = {
        option
        for action in _check_parser()._actions
        for option in action.option_strings
        if option not in ("-h", "--help")
    }
    assert sorted(options - documented) == [], "in `check --help`, not in the README's table"
    assert sorted(documented - options) == [], "in the README's table, not in `check --help`"


def test_the_help_says_what_the_readme_says_about_each_group():
    help_text = _check_parser().format_help()
    for group in ("Fixing", "Rule selection", "File selection", "Configuration", "Output", "Suppression", "Verify"):
        assert f"| **{group}** |" in README, group
        assert f"\n{group}" in help_text, group


def test_the_verify_table_matches_verify_help():
    section = README[README.index("## verify: run it before and after the fix") :]
    table = section[section.index("| option | meaning |") :].split("\n\n")[0]
    documented = {
        option
        for row in table.splitlines()[2:]
        for option in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", row.split(" | ")[0])
    }
    actions = [action for action in _command_parser("verify")._actions if action.option_strings and "-h" not in action.option_strings]
    undocumented = [action.option_strings for action in actions if not documented & set(action.option_strings)]
    assert undocumented == [], "in `verify --help`, not in the README's table"
    known = {option for action in actions for option in action.option_strings}
    assert sorted(documented - known) == [], "in the README's table, not in `verify --help`"
