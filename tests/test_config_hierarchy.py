"""Settings per file, as Ruff and Fixit resolve them: the nearest pyproject.toml with a
[tool.precision-lint] table or precision-lint.toml governs each file, whatever the
order of the paths; `extend`, `--config`, `--isolated`, `--show-settings`,
`--show-files`; gitignore-style patterns; did-you-mean for config keys."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import HAZARD, run_cli

MESSAGE_START = "PH001 error [*] `acc` accumulates integer counts"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def reported(result) -> list[str]:
    return sorted(line.split(":")[0] for line in result.stdout.splitlines() if MESSAGE_START in line)


def project(tmp_path: Path) -> Path:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n\n[tool.precision-lint]\n")
    write(tmp_path / "tests" / "pyproject.toml", "[tool.precision-lint]\nignore = ['PH001']\n")
    write(tmp_path / "src" / "a.py", HAZARD)
    write(tmp_path / "tests" / "t.py", HAZARD)
    return tmp_path


def concise(tmp_path: Path, *args: str):
    return run_cli("check", "--no-cache", "--output-format", "concise", *args, cwd=tmp_path)


def test_each_file_gets_its_nearest_config_whatever_the_order(tmp_path):
    project(tmp_path)
    for order in (["tests", "src"], ["src", "tests"], ["tests/t.py", "src/a.py"], ["src/a.py", "tests/t.py"], ["."]):
        result = concise(tmp_path, *order)
        assert reported(result) == ["src/a.py"], (order, result.stdout, result.stderr)
        assert result.returncode == 1


def test_precision_lint_toml_is_a_config_and_wins_in_its_folder(tmp_path):
    project(tmp_path)
    # in one folder: .precision-lint.toml, then precision-lint.toml, then pyproject.toml (as Ruff)
    write(tmp_path / "src" / "pyproject.toml", "[tool.precision-lint]\nignore = ['PH001']\n")
    write(tmp_path / "src" / "precision-lint.toml", "select = ['PH0']\n")
    assert reported(concise(tmp_path, ".")) == ["src/a.py"]
    write(tmp_path / "src" / ".precision-lint.toml", "ignore = ['PH001']\n")
    assert reported(concise(tmp_path, ".")) == []


def test_a_pyproject_without_the_table_is_passed_over(tmp_path):
    project(tmp_path)
    write(tmp_path / "tests" / "unit" / "pyproject.toml", "[project]\nname = 'other'\n")
    write(tmp_path / "tests" / "unit" / "u.py", HAZARD)
    assert reported(concise(tmp_path, "tests")) == []


def test_extend_reads_the_other_file_first_with_its_own_relative_paths(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nper-file-ignores = { 'sub/legacy.py' = ['PH001'] }\nignore = ['PH003']\n")
    write(tmp_path / "sub" / "precision-lint.toml", "extend = '../pyproject.toml'\nextend-select = ['PH201']\n")
    write(tmp_path / "sub" / "legacy.py", HAZARD)
    write(tmp_path / "sub" / "new.py", HAZARD)
    result = concise(tmp_path, "sub")
    # the pattern is the root file's, relative to the root: it still names sub/legacy.py
    assert reported(result) == ["sub/new.py"], result.stdout
    shown = run_cli("check", "--show-settings", "sub/new.py", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"config file: {tmp_path / 'sub' / 'precision-lint.toml'}" in shown.stdout
    assert f"  extends: {tmp_path / 'pyproject.toml'}" in shown.stdout
    assert f'extend-select = ["PH201"]  # {tmp_path / "sub" / "precision-lint.toml"}' in shown.stdout
    assert f'ignore = ["PH003"]  # {tmp_path / "pyproject.toml"}' in shown.stdout
    assert "PH201" in shown.stdout.split("rules checked in this file: ")[1].splitlines()[0]


def test_extend_cycle_and_missing_target_are_errors(tmp_path):
    write(tmp_path / "precision-lint.toml", "extend = 'other.toml'\n")
    write(tmp_path / "other.toml", "extend = 'precision-lint.toml'\n")
    write(tmp_path / "a.py", HAZARD)
    cycle = concise(tmp_path, "a.py")
    assert cycle.returncode == 2 and "`extend` makes a cycle" in cycle.stderr
    write(tmp_path / "precision-lint.toml", "extend = 'gone.toml'\n")
    missing = concise(tmp_path, "a.py")
    assert missing.returncode == 2 and "gone.toml" in missing.stderr and "does not exist" in missing.stderr


def test_verify_reads_each_files_nearest_config_too(tmp_path):
    project(tmp_path)

    def verified(*args: str) -> list[str]:
        result = run_cli("verify", "--device", "cpu", "--output-format", "json", *args, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        return sorted(r["path"] for r in json.loads(result.stdout))

    # tests/pyproject.toml ignores PH001 under tests/ only, whichever path comes first
    assert verified("tests", "src") == ["src/a.py"]
    assert verified("src/a.py", "tests/t.py") == ["src/a.py"]
    assert verified("--isolated", "tests") == ["tests/t.py"]
    assert verified("--config", "pyproject.toml", "tests") == ["tests/t.py"]


def test_config_option_applies_one_file_to_every_path(tmp_path):
    project(tmp_path)
    write(tmp_path / "strict.toml", "select = ['PH001']\n")
    result = concise(tmp_path, "--config", "strict.toml", "tests", "src")
    assert reported(result) == ["src/a.py", "tests/t.py"]


def test_config_option_takes_toml_settings_too(tmp_path):
    project(tmp_path)
    result = concise(tmp_path, "--config", "ignore = ['PH001']", ".")
    assert reported(result) == [] and result.returncode == 0
    bad = concise(tmp_path, "--config", "ignor = ['PH001']", ".")
    assert bad.returncode == 2 and "unknown key `ignor`; did you mean `ignore`?" in bad.stderr


def test_isolated_reads_no_config(tmp_path):
    project(tmp_path)
    result = concise(tmp_path, "--isolated", ".")
    assert reported(result) == ["src/a.py", "tests/t.py"]
    both = concise(tmp_path, "--isolated", "--config", "pyproject.toml", ".")
    assert both.returncode == 2 and "--isolated" in both.stderr


def test_command_line_options_lie_over_every_config(tmp_path):
    project(tmp_path)
    # --select starts afresh over each file's own config, tests/ included
    result = concise(tmp_path, "--select", "PH001", ".")
    assert reported(result) == ["src/a.py", "tests/t.py"]


def test_show_settings_names_the_sources(tmp_path):
    project(tmp_path)
    result = run_cli("check", "--show-settings", "tests/t.py", "--extend-select", "PH201", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"Settings for {tmp_path / 'tests' / 't.py'}\n")
    assert f"config file: {tmp_path / 'tests' / 'pyproject.toml'}\n" in out
    assert f'ignore = ["PH001"]  # {tmp_path / "tests" / "pyproject.toml"}' in out
    assert 'extend-select = ["PH201"]  # command line' in out
    assert 'select = ["PH0"]  # default' in out
    rules = out.split("rules checked in this file: ")[1].splitlines()[0]
    assert "PH001" not in rules and "PH201" in rules and "PH002" in rules


def test_show_files_lists_what_would_be_checked(tmp_path):
    project(tmp_path)
    write(tmp_path / "build" / "gen.py", HAZARD)  # excluded by default
    write(tmp_path / "notes.txt", "torch")
    write(tmp_path / "nb.ipynb", json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    result = run_cli("check", "--show-files", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["nb.ipynb", "src/a.py", "tests/t.py"]


def test_unknown_config_key_suggests_the_right_one(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nextend-selct = ['PH201']\n")
    write(tmp_path / "a.py", HAZARD)
    result = concise(tmp_path, "a.py")
    assert result.returncode == 2
    assert "unknown key `extend-selct`; did you mean `extend-select`?" in result.stderr


# -- gitignore-style patterns --------------------------------------------------------
def test_exclude_star_stays_inside_one_folder(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nextend-exclude = ['gen/*.py']\n")
    write(tmp_path / "gen" / "a.py", HAZARD)
    write(tmp_path / "gen" / "deep" / "b.py", HAZARD)
    result = run_cli("check", "--show-files", ".", cwd=tmp_path)
    # fnmatch's `*` would cross `/` and drop gen/deep/b.py too
    assert result.stdout.splitlines() == ["gen/deep/b.py"]


def test_double_star_folder_and_negation_patterns(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nextend-exclude = ['**/legacy/', 'vendor/*', '!vendor/ours.py', 'old', '!old/keep.py']\n")
    for name in ("src/legacy/a.py", "src/x/legacy/b.py", "src/legacy.py", "vendor/theirs.py", "vendor/ours.py", "old/keep.py"):
        write(tmp_path / name, HAZARD)
    result = run_cli("check", "--show-files", ".", cwd=tmp_path)
    # `legacy/` matches folders only; `!` takes a file back, but (as in git) not out of
    # a folder that is excluded whole (`old`)
    assert result.stdout.splitlines() == ["src/legacy.py", "vendor/ours.py"], result.stdout


def test_per_file_ignores_accept_a_leading_dot_slash(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nper-file-ignores = { './src/x.py' = ['PH001'] }\n")
    write(tmp_path / "src" / "x.py", HAZARD)
    write(tmp_path / "other" / "src" / "x.py", HAZARD)
    # anchored to the config's folder: ./src/x.py is that file, not any src/x.py
    assert reported(concise(tmp_path, ".")) == ["other/src/x.py"]


def test_exclude_and_per_file_ignores_on_the_command_line(tmp_path):
    project(tmp_path)
    write(tmp_path / "scripts" / "s.py", HAZARD)
    excluded = run_cli("check", "--show-files", "--extend-exclude", "scripts/", ".", cwd=tmp_path)
    assert excluded.stdout.splitlines() == ["src/a.py", "tests/t.py"]
    replaced = run_cli("check", "--show-files", "--exclude", "src", ".", cwd=tmp_path)
    # --exclude replaces the defaults too: only src/ is left out
    assert replaced.stdout.splitlines() == ["scripts/s.py", "tests/t.py"]
    ignored = concise(tmp_path, "--per-file-ignores", "scripts/*:PH001,PH002", ".")
    assert reported(ignored) == ["src/a.py"]
    wrong = concise(tmp_path, "--per-file-ignores", "scripts/*", ".")
    assert wrong.returncode == 2 and "PATTERN:CODES" in wrong.stderr


def test_the_repository_excludes_its_own_fixtures(repo_root):
    result = run_cli("check", "--show-files", ".", cwd=repo_root)
    assert result.returncode == 0, result.stderr
    listed = result.stdout.splitlines()
    assert "precision_lint/cli.py" in listed
    assert "benchmarks/cases/score.py" in listed
    assert not [
        p for p in listed if p.startswith(("tests/fixtures/", "tests/projects/", "examples/", "benchmarks/cases/cases/"))
    ]
    # so a check of the clone reports nothing
    whole = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=repo_root)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert whole.stdout == "All checks passed!\n"
    # named on the command line, an excluded folder is still checked
    named = run_cli("check", "--show-files", "examples", cwd=repo_root)
    assert named.stdout.splitlines() == ["examples/count_zeros.py", "examples/eval_metrics.py"]
