"""End-to-end tests of the command line, run the way a user runs it: `python -m
precision_lint ...` in a child process, on files under tmp_path."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import HAZARD, HAZARD_FIXED, UNSAFE, run_cli

UNSAFE_FIXED = UNSAFE.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")
CLEAN = (
    "import torch\n"
    "n = torch.zeros(1, dtype=torch.int64)\n"
    "for x in xs:\n"
    "    n += (x == 0).sum()\n"
    "print(n.item())\n"
)
MESSAGE = "`acc` accumulates integer counts in float32 (the default dtype), which is exact only up to 2^24 = 16,777,216"
CACHE_DIR = ".precision-lint-cache"


def cli(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, stdin=stdin)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def concise_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if re.match(r"^\S+:\d+:\d+: ", line)]


# -- exit codes --------------------------------------------------------------------
def test_clean_file_exits_0(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    result = cli(tmp_path, "check", "--no-cache", "clean.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All checks passed!\n"
    assert result.stderr == ""


def test_findings_exit_1_with_full_output(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "a.py")
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert f"a.py:2:7: PH001 error [*] {MESSAGE}\n" in out
    # the source line with a caret under the accumulator's creation
    assert "2 | acc = torch.zeros(1)\n" in out
    assert "  |       ^^^^^^^^^^^^^^ PH001\n" in out
    assert "  = help: Use `dtype=torch.int64`\n" in out
    assert "  = counts added here: line 4\n" in out
    assert out.endswith("Found 1 error.\n[*] 1 fixable with the `--fix` option.\n")
    assert (tmp_path / "a.py").read_text() == HAZARD  # a check writes nothing


def test_unknown_selector_exits_2(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--select", "XYZ999", "a.py")
    assert result.returncode == 2
    assert "XYZ999" in result.stderr
    assert "PH001" not in result.stdout


def test_unknown_selector_in_config_exits_2(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.precision-lint]\nignore = ["XYZ999"]\n')
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "a.py")
    assert result.returncode == 2
    assert "XYZ999" in result.stderr


def test_missing_path_exits_2(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "a.py", "does_not_exist.py")
    assert result.returncode == 2
    assert "does_not_exist.py" in result.stderr
    assert "No such file or directory" in result.stderr


def test_unknown_config_key_exits_2(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.precision-lint]\nbogus-key = ["PH001"]\n')
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "a.py")
    assert result.returncode == 2
    assert "bogus-key" in result.stderr
    assert "PH001" not in result.stdout


def test_malformed_config_exits_2(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint\nselect = \n")
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "a.py")
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr


def test_exit_zero_with_findings(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--exit-zero", "a.py")
    assert result.returncode == 0
    assert f"a.py:2:7: PH001 error [*] {MESSAGE}" in result.stdout
    assert "Found 1 error." in result.stdout


def test_exit_non_zero_on_fix(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--fix", "--exit-non-zero-on-fix", "a.py")
    assert result.returncode == 1
    assert target.read_text() == HAZARD_FIXED
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout
    # nothing left to fix: 0 again
    again = cli(tmp_path, "check", "--fix", "--exit-non-zero-on-fix", "a.py")
    assert again.returncode == 0
    assert again.stdout == "All checks passed!\n"


def test_fix_without_the_flag_exits_0_once_everything_is_fixed(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_text() == HAZARD_FIXED


@pytest.mark.parametrize("args", [("--fix", "a.py"), ("a.py", "--fix")])
def test_fix_shorthand_without_check_word(tmp_path, args):
    target = write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_text() == HAZARD_FIXED
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout


def test_bare_path_shorthand_checks(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "--no-cache", "--output-format", "concise", "a.py")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"a.py:2:7: PH001 error [*] {MESSAGE}"]


def test_no_paths_checks_the_current_directory(tmp_path):
    write(tmp_path / "pkg" / "a.py", HAZARD)
    write(tmp_path / "b.py", CLEAN)
    result = cli(tmp_path, "--no-cache", "--output-format", "concise")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"pkg/a.py:2:7: PH001 error [*] {MESSAGE}"]


# -- fixing ------------------------------------------------------------------------
def test_fix_writes_safe_fix_and_second_fix_changes_nothing(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    first = cli(tmp_path, "check", "--fix", "a.py")
    assert first.returncode == 0
    assert target.read_text() == HAZARD_FIXED
    mtime = target.stat().st_mtime_ns
    second = cli(tmp_path, "check", "--fix", "a.py")
    assert second.returncode == 0
    assert second.stdout == "All checks passed!\n"
    assert target.read_text() == HAZARD_FIXED
    assert target.stat().st_mtime_ns == mtime  # not even rewritten


def test_unsafe_fix_needs_unsafe_fixes(tmp_path):
    target = write(tmp_path / "u.py", UNSAFE)
    check = cli(tmp_path, "check", "--no-cache", "u.py")
    assert check.returncode == 1
    # no [*]: the fix is not applied by --fix
    assert "u.py:3:11: PH001 error `acc` accumulates" in check.stdout
    assert "  = help (unsafe): Use `dtype=torch.int64`" in check.stdout
    assert "hidden fix" in check.stdout and "--unsafe-fixes" in check.stdout
    assert "fixable with the `--fix` option" not in check.stdout

    plain = cli(tmp_path, "check", "--fix", "u.py")
    assert plain.returncode == 1
    assert target.read_text() == UNSAFE
    assert "(0 fixed, 1 remaining)" in plain.stdout
    assert "hidden fix" in plain.stdout and "--unsafe-fixes" in plain.stdout

    unsafe = cli(tmp_path, "check", "--fix", "--unsafe-fixes", "u.py")
    assert unsafe.returncode == 0, unsafe.stdout + unsafe.stderr
    assert target.read_text() == UNSAFE_FIXED
    assert "(1 fixed, 0 remaining)" in unsafe.stdout


def test_unsafe_fixes_without_fix_only_changes_the_display(tmp_path):
    target = write(tmp_path / "u.py", UNSAFE)
    result = cli(tmp_path, "check", "--no-cache", "--unsafe-fixes", "--output-format", "concise", "u.py")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"u.py:3:11: PH001 error [*] {MESSAGE}"]
    assert "[*] 1 fixable with the `--fix --unsafe-fixes` option." in result.stdout
    assert target.read_text() == UNSAFE


def test_unfixable_rule_is_not_fixed_nor_advertised_as_fixable(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--fix", "--unfixable", "PH001", "--output-format", "concise", "a.py")
    assert result.returncode == 1
    assert target.read_text() == HAZARD
    # --fix just declined to fix it, so it must not be offered as fixable with --fix
    assert concise_lines(result.stdout) == [f"a.py:2:7: PH001 error {MESSAGE}"]
    assert "fixable with the `--fix` option" not in result.stdout


def test_fix_leaves_noqa_suppressed_finding_alone(tmp_path):
    source = HAZARD.replace("torch.zeros(1)\n", "torch.zeros(1)  # noqa: PH001\n")
    target = write(tmp_path / "a.py", source)
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0
    assert target.read_text() == source


# -- --diff ------------------------------------------------------------------------
def test_diff_prints_unified_diff_and_writes_nothing(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--diff", "a.py")
    assert result.returncode == 1
    assert target.read_text() == HAZARD
    assert result.stdout.startswith("--- a.py\n+++ a.py\n@@ ")
    assert "\n-acc = torch.zeros(1)\n+acc = torch.zeros(1, dtype=torch.int64)\n" in result.stdout
    assert " for x in xs:\n" in result.stdout  # context lines
    assert "Would fix 1 error." in result.stderr


def test_diff_with_nothing_to_fix_exits_0(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    result = cli(tmp_path, "check", "--diff", "clean.py")
    assert result.returncode == 0
    assert result.stdout == ""


def test_diff_does_not_show_unsafe_fixes(tmp_path):
    target = write(tmp_path / "u.py", UNSAFE)
    result = cli(tmp_path, "check", "--diff", "u.py")
    assert result.returncode == 0
    assert result.stdout == ""
    with_unsafe = cli(tmp_path, "check", "--diff", "--unsafe-fixes", "u.py")
    assert with_unsafe.returncode == 1
    assert "+    acc = torch.zeros(1, dtype=torch.int64)\n" in with_unsafe.stdout
    assert target.read_text() == UNSAFE


# -- output formats ----------------------------------------------------------------
def test_json_output(tmp_path):
    source = (
        "import torch\n"
        "acc = torch.zeros(1)\n"
        "for x in xs:\n"
        "    acc += (x == 0).sum()\n"
        "    acc += x.numel()\n"
        "print(acc.item())\n"
    )
    write(tmp_path / "a.py", source)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "json", "a.py")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert isinstance(data, list) and len(data) == 1
    finding = data[0]
    assert finding["code"] == "PH001"
    assert finding["message"] == MESSAGE
    assert finding["filename"] == str(tmp_path / "a.py")
    assert Path(finding["filename"]).is_absolute()
    assert finding["location"] == {"row": 2, "column": 7}
    assert finding["end_location"] == {"row": 2, "column": 21}
    assert finding["noqa_row"] == 2
    assert finding["severity"] == "error"
    assert finding["url"] is None  # no hosted rule pages (yet): `precision-lint rule CODE`
    assert finding["fix"] == {
        "applicability": "safe",
        "message": "Use `dtype=torch.int64`",
        "edits": [
            {  # a minimal edit: insert after the last argument, keep the rest as written
                "content": ", dtype=torch.int64",
                "location": {"row": 2, "column": 20},
                "end_location": {"row": 2, "column": 20},
            }
        ],
    }
    assert [(r["message"], r["location"]["row"]) for r in finding["related"]] == [
        ("counts added here", 4),
        ("counts added here", 5),
    ]
    # applying the edit by hand gives the fixed source
    lines = source.splitlines(keepends=True)
    edit = finding["fix"]["edits"][0]
    line = lines[edit["location"]["row"] - 1]
    start, end = edit["location"]["column"] - 1, edit["end_location"]["column"] - 1
    fixed_line = line[:start] + edit["content"] + line[end:]
    assert "".join(lines[:1] + [fixed_line] + lines[2:]) == source.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")


def test_json_unsafe_and_no_findings(tmp_path):
    write(tmp_path / "u.py", UNSAFE)
    write(tmp_path / "clean.py", CLEAN)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "json", "u.py", "clean.py")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)
    assert finding["location"] == {"row": 3, "column": 11}
    assert finding["fix"]["applicability"] == "unsafe"
    assert [r["location"]["row"] for r in finding["related"] if r["message"] == "counts added here"] == [5]

    clean = cli(tmp_path, "check", "--no-cache", "--output-format", "json", "clean.py")
    assert clean.returncode == 0
    assert json.loads(clean.stdout) == []


def test_json_finding_without_fix_has_null_fix(tmp_path):
    source = (
        "import torch\n"
        "acc = torch.zeros(1)\n"
        "for x in xs:\n"
        "    acc += (x == 0).sum()\n"
        "acc /= len(xs)\n"
    )
    write(tmp_path / "a.py", source)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "json", "a.py")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)
    assert finding["fix"] is None
    assert finding["location"] == {"row": 2, "column": 7}


def test_concise_output(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    write(tmp_path / "sub" / "u.py", UNSAFE)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [
        f"a.py:2:7: PH001 error [*] {MESSAGE}",
        f"sub/u.py:3:11: PH001 error {MESSAGE}",
    ]
    assert "Found 2 errors." in result.stdout


def test_statistics(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    write(tmp_path / "b.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--statistics", "a.py", "b.py")
    assert result.returncode == 1
    assert result.stdout == "2\tPH001\t[*] float-count-accumulator\n"

    write(tmp_path / "u.py", UNSAFE)
    unsafe = cli(tmp_path, "check", "--no-cache", "--statistics", "u.py")
    assert unsafe.returncode == 1
    assert unsafe.stdout == "1\tPH001\t[ ] float-count-accumulator\n"


def test_show_fixes_lists_fixed_files(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    write(tmp_path / "pkg" / "b.py", HAZARD)
    write(tmp_path / "clean.py", CLEAN)
    result = cli(tmp_path, "check", "--fix", "--show-fixes", ".")
    assert result.returncode == 0
    out = result.stdout
    assert "Fixed 2 errors:\n" in out
    assert "- a.py:\n    1 × PH001 (float-count-accumulator)\n" in out
    assert "- pkg/b.py:\n    1 × PH001 (float-count-accumulator)\n" in out
    assert "clean.py" not in out
    assert (tmp_path / "pkg" / "b.py").read_text() == HAZARD_FIXED


def test_full_output_shows_source_line_in_the_files_encoding(tmp_path):
    source = HAZARD.replace("acc = torch.zeros(1)\n", "acc = torch.zeros(1)  # \u00e9t\u00e9\n")
    (tmp_path / "l1.py").write_bytes(("# -*- coding: latin-1 -*-\n" + source).encode("latin-1"))
    result = cli(tmp_path, "check", "--no-cache", "l1.py")
    assert result.returncode == 1
    assert "l1.py:3:7: PH001" in result.stdout
    assert "3 | acc = torch.zeros(1)  # \u00e9t\u00e9\n" in result.stdout


# -- syntax errors -----------------------------------------------------------------
BROKEN = "import torch\nx = = 1\nprint(x)\n"


def test_syntax_error_is_reported_and_other_files_still_checked(tmp_path):
    write(tmp_path / "bad.py", BROKEN)
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "bad.py", "a.py")
    assert result.returncode == 1
    lines = concise_lines(result.stdout)
    assert f"a.py:2:7: PH001 error [*] {MESSAGE}" in lines
    (bad,) = [line for line in lines if line.startswith("bad.py:")]
    assert re.match(r"^bad\.py:\d+:\d+: SyntaxError: ", bad), bad
    assert "Found 2 errors." in result.stdout

    data = json.loads(cli(tmp_path, "check", "--no-cache", "--output-format", "json", "bad.py", "a.py").stdout)
    by_file = {Path(d["filename"]).name: d for d in data}
    assert by_file["bad.py"]["code"] is None
    assert by_file["bad.py"]["message"].startswith("SyntaxError")
    assert by_file["a.py"]["code"] == "PH001"


def test_fix_does_not_touch_a_file_with_a_syntax_error(tmp_path):
    bad = write(tmp_path / "bad.py", BROKEN + HAZARD)
    good = write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--fix", "bad.py", "a.py")
    assert result.returncode == 1
    assert bad.read_text() == BROKEN + HAZARD
    assert good.read_text() == HAZARD_FIXED


@pytest.mark.parametrize(
    "broken",
    [
        "import torch\nx = = 1\nprint(x)\n",
        "import torch\nx = )\nprint(x)\n",
        "import torch\ny = 1\nif y\n    pass\n",
    ],
    ids=["double-equals", "unmatched-paren", "missing-colon"],
)
def test_syntax_error_row_is_the_offending_line(tmp_path, broken):
    with pytest.raises(SyntaxError) as info:
        compile(broken, "bad.py", "exec")
    expected_row = info.value.lineno
    write(tmp_path / "bad.py", broken)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "json", "bad.py")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)
    assert finding["message"].startswith("SyntaxError")
    assert finding["location"]["row"] == expected_row, finding


# -- noqa --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("# noqa", True),
        ("# noqa: PH001", True),
        ("#noqa:PH001", True),
        ("# NOQA: ph001", True),
        ("# noqa: E501, PH001", True),
        ("# noqa: PH999", False),
        ("# noqa: E501", False),
        ("# noqa: PH0011", False),
    ],
)
def test_noqa_on_the_reported_line(tmp_path, comment, suppressed):
    write(tmp_path / "a.py", HAZARD.replace("torch.zeros(1)\n", f"torch.zeros(1)  {comment}\n"))
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "a.py")
    if suppressed:
        assert result.returncode == 0
        assert result.stdout == "All checks passed!\n"
    else:
        assert result.returncode == 1
        assert concise_lines(result.stdout) == [f"a.py:2:7: PH001 error [*] {MESSAGE}"]


def test_noqa_on_another_line_does_not_suppress(tmp_path):
    write(tmp_path / "a.py", HAZARD.replace("(x == 0).sum()\n", "(x == 0).sum()  # noqa: PH001\n"))
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "a.py")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"a.py:2:7: PH001 error [*] {MESSAGE}"]


# -- configuration -----------------------------------------------------------------
def test_config_ignore_found_by_walking_up(tmp_path):
    write(tmp_path / "proj" / "pyproject.toml", '[tool.precision-lint]\nignore = ["PH001"]\n')
    # a nearer pyproject.toml without the table is passed over
    write(tmp_path / "proj" / "src" / "pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path / "proj" / "src" / "deep" / "a.py", HAZARD)
    write(tmp_path / "other" / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "proj/src/deep/a.py")
    assert result.returncode == 0, result.stdout
    assert result.stdout == "All checks passed!\n"
    # the same file outside that project is flagged
    outside = cli(tmp_path, "check", "--no-cache", "other/a.py")
    assert outside.returncode == 1


def test_config_per_file_ignores(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[tool.precision-lint]\nper-file-ignores = {"tests/*" = ["PH001"]}\n')
    write(project / "tests" / "test_a.py", HAZARD)
    write(project / "src" / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "proj")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"proj/src/a.py:2:7: PH001 error [*] {MESSAGE}"]
    # the patterns are relative to the project, not to the working directory
    inside = cli(project, "check", "--no-cache", "--output-format", "concise")
    assert concise_lines(inside.stdout) == [f"src/a.py:2:7: PH001 error [*] {MESSAGE}"]


def test_config_extend_exclude(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[tool.precision-lint]\nextend-exclude = ["generated"]\n')
    write(project / "generated" / "g.py", HAZARD)
    write(project / "src" / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "proj")
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"proj/src/a.py:2:7: PH001 error [*] {MESSAGE}"]


def test_config_exclude_and_the_default_excludes(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[tool.precision-lint]\nexclude = ["legacy_*.py"]\n')
    write(project / "legacy_a.py", HAZARD)
    write(project / "a.py", HAZARD)
    write(tmp_path / "plain" / ".venv" / "lib" / "x.py", HAZARD)
    write(tmp_path / "plain" / "b.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "proj")
    assert concise_lines(result.stdout) == [f"proj/a.py:2:7: PH001 error [*] {MESSAGE}"]
    plain = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "plain")
    assert concise_lines(plain.stdout) == [f"plain/b.py:2:7: PH001 error [*] {MESSAGE}"]


def test_explicitly_named_excluded_file_and_force_exclude(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[tool.precision-lint]\nextend-exclude = ["generated"]\n')
    write(project / "generated" / "g.py", HAZARD)
    named = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "proj/generated/g.py")
    assert named.returncode == 1
    assert concise_lines(named.stdout) == [f"proj/generated/g.py:2:7: PH001 error [*] {MESSAGE}"]
    forced = cli(tmp_path, "check", "--no-cache", "--force-exclude", "proj/generated/g.py")
    # every file named is excluded: nothing is checked, and the run says so (as Ruff does)
    assert forced.returncode == 0
    assert forced.stdout == ""
    assert "warning: No Python files found under the given path(s)" in forced.stderr


def test_cli_ignore_adds_to_config(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.precision-lint]\nselect = ["PH001"]\n')
    write(tmp_path / "a.py", HAZARD)
    assert cli(tmp_path, "check", "--no-cache", "a.py").returncode == 1
    result = cli(tmp_path, "check", "--no-cache", "--ignore", "PH001", "a.py")
    assert result.returncode == 0
    assert result.stdout == "All checks passed!\n"


def test_cli_select_overrides_config_ignore(tmp_path):
    # Ruff's rule: the command line's --select starts a new selection, and the
    # config's select/ignore no longer apply (`ruff --select E501` re-enables an
    # E501 that pyproject.toml ignores). cli.py's help says it "replaces the config's".
    write(tmp_path / "pyproject.toml", '[tool.precision-lint]\nignore = ["PH001"]\n')
    write(tmp_path / "a.py", HAZARD)
    assert cli(tmp_path, "check", "--no-cache", "a.py").returncode == 0
    result = cli(tmp_path, "check", "--no-cache", "--select", "PH001", "--output-format", "concise", "a.py")
    assert result.returncode == 1, result.stdout
    assert concise_lines(result.stdout) == [f"a.py:2:7: PH001 error [*] {MESSAGE}"]


def test_explicit_config_option(tmp_path):
    write(tmp_path / "conf" / "pyproject.toml", '[tool.precision-lint]\nignore = ["PH001"]\n')
    write(tmp_path / "a.py", HAZARD)
    assert cli(tmp_path, "check", "--no-cache", "a.py").returncode == 1
    result = cli(tmp_path, "check", "--no-cache", "--config", "conf/pyproject.toml", "a.py")
    assert result.returncode == 0
    missing = cli(tmp_path, "check", "--no-cache", "--config", "nope/pyproject.toml", "a.py")
    assert missing.returncode == 2
    assert "nope" in missing.stderr


# -- git ---------------------------------------------------------------------------
def _git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)


def test_gitignored_files_are_skipped_when_walking(tmp_path):
    _git_init(tmp_path)
    write(tmp_path / ".gitignore", "generated/\nscratch_*.py\n")
    write(tmp_path / "generated" / "g.py", HAZARD)
    write(tmp_path / "scratch_1.py", HAZARD)
    write(tmp_path / "src" / "a.py", HAZARD)
    for args in (("--no-cache", "."), ("--no-cache",)):
        result = cli(tmp_path, "check", "--output-format", "concise", *args)
        assert result.returncode == 1, args
        assert concise_lines(result.stdout) == [f"src/a.py:2:7: PH001 error [*] {MESSAGE}"], args


def test_gitignored_file_named_explicitly(tmp_path):
    _git_init(tmp_path)
    write(tmp_path / ".gitignore", "generated/\n")
    write(tmp_path / "generated" / "g.py", HAZARD)
    named = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "generated/g.py")
    assert named.returncode == 1
    assert concise_lines(named.stdout) == [f"generated/g.py:2:7: PH001 error [*] {MESSAGE}"]
    forced = cli(tmp_path, "check", "--no-cache", "--force-exclude", "generated/g.py")
    # every file named is excluded: nothing is checked, and the run says so (as Ruff does)
    assert forced.returncode == 0
    assert forced.stdout == ""
    assert "warning: No Python files found under the given path(s)" in forced.stderr
    fixed = cli(tmp_path, "check", "--fix", "--force-exclude", "generated/g.py")
    assert fixed.returncode == 0
    assert (tmp_path / "generated" / "g.py").read_text() == HAZARD


# -- stdin -------------------------------------------------------------------------
def test_stdin_uses_stdin_filename(tmp_path):
    result = cli(
        tmp_path, "check", "--no-cache", "--output-format", "concise", "--stdin-filename", "pkg/x.py", "-", stdin=HAZARD
    )
    assert result.returncode == 1
    assert concise_lines(result.stdout) == [f"pkg/x.py:2:7: PH001 error [*] {MESSAGE}"]
    assert not (tmp_path / "pkg").exists()

    as_json = cli(tmp_path, "check", "--output-format", "json", "--stdin-filename", "pkg/x.py", "-", stdin=HAZARD)
    (finding,) = json.loads(as_json.stdout)
    assert finding["filename"] == str(tmp_path / "pkg" / "x.py")
    assert finding["location"] == {"row": 2, "column": 7}


def test_stdin_clean(tmp_path):
    result = cli(tmp_path, "check", "--stdin-filename", "x.py", "-", stdin=CLEAN)
    assert result.returncode == 0
    assert result.stdout == "All checks passed!\n"


def test_stdin_filename_applies_per_file_ignores(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.precision-lint]\nper-file-ignores = {"tests/*" = ["PH001"]}\n')
    ignored = cli(tmp_path, "check", "--stdin-filename", "tests/x.py", "-", stdin=HAZARD)
    assert ignored.returncode == 0
    flagged = cli(tmp_path, "check", "--stdin-filename", "src/x.py", "-", stdin=HAZARD)
    assert flagged.returncode == 1


def test_stdin_fix_prints_fixed_source(tmp_path):
    result = cli(tmp_path, "check", "--fix", "--stdin-filename", "x.py", "-", stdin=HAZARD)
    assert result.returncode == 0, result.stderr
    assert result.stdout == HAZARD_FIXED
    assert not (tmp_path / "x.py").exists()


def test_stdin_fix_with_unsafe_only_finding(tmp_path):
    result = cli(tmp_path, "check", "--fix", "--stdin-filename", "u.py", "-", stdin=UNSAFE)
    assert result.returncode == 1
    assert result.stdout == UNSAFE  # the source comes back unchanged
    assert "u.py:3:11: PH001" in result.stderr
    unsafe = cli(tmp_path, "check", "--fix", "--unsafe-fixes", "--stdin-filename", "u.py", "-", stdin=UNSAFE)
    assert unsafe.returncode == 0
    assert unsafe.stdout == UNSAFE_FIXED


def test_stdin_diff(tmp_path):
    result = cli(tmp_path, "check", "--diff", "--stdin-filename", "x.py", "-", stdin=HAZARD)
    assert result.returncode == 1
    assert "-acc = torch.zeros(1)\n+acc = torch.zeros(1, dtype=torch.int64)\n" in result.stdout


# -- rule --------------------------------------------------------------------------
def test_rule_doc(tmp_path):
    result = cli(tmp_path, "rule", "PH001")
    assert result.returncode == 0
    assert result.stdout.startswith("# float-count-accumulator (PH001)\n")
    assert "## Fix safety" in result.stdout
    assert "## What it does" in result.stdout
    by_name = cli(tmp_path, "rule", "float-count-accumulator")
    assert by_name.returncode == 0
    assert by_name.stdout == result.stdout


def test_rule_all_and_json(tmp_path):
    result = cli(tmp_path, "rule", "--all")
    assert result.returncode == 0
    assert "# float-count-accumulator (PH001)" in result.stdout
    assert "## Fix safety" in result.stdout
    as_json = cli(tmp_path, "rule", "PH001", "--output-format", "json")
    assert as_json.returncode == 0
    payload = json.loads(as_json.stdout)
    assert payload["code"] == "PH001"
    assert payload["name"] == "float-count-accumulator"
    assert payload["fix"] == "sometimes"
    assert "## Fix safety" in payload["explanation"]


def test_unknown_rule_exits_2(tmp_path):
    result = cli(tmp_path, "rule", "PH999")
    assert result.returncode == 2
    assert "PH999" in result.stderr
    assert result.stdout == ""


def test_version(tmp_path):
    result = cli(tmp_path, "--version")
    assert result.returncode == 0
    assert re.match(r"^precision-lint \d+\.\d+", result.stdout)


# -- cache -------------------------------------------------------------------------
def test_cache_second_run_is_identical(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    write(tmp_path / "u.py", UNSAFE)
    first = cli(tmp_path, "check", ".")
    assert first.returncode == 1
    assert (tmp_path / CACHE_DIR).is_dir()
    second = cli(tmp_path, "check", ".")
    assert (second.returncode, second.stdout, second.stderr) == (first.returncode, first.stdout, first.stderr)
    uncached = cli(tmp_path, "check", "--no-cache", "--output-format", "json", ".")
    cached = cli(tmp_path, "check", "--output-format", "json", ".")
    assert cached.stdout == uncached.stdout


def test_cache_sees_edited_content(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    first = cli(tmp_path, "check", "a.py")
    assert first.returncode == 1
    target.write_text(HAZARD_FIXED)  # fixed by hand
    second = cli(tmp_path, "check", "a.py")
    assert second.returncode == 0
    assert second.stdout == "All checks passed!\n"
    target.write_text(HAZARD)  # and broken again
    third = cli(tmp_path, "check", "a.py")
    assert third.returncode == 1
    assert third.stdout == first.stdout


def test_cache_respects_changed_rule_selection(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    assert cli(tmp_path, "check", "a.py").returncode == 1
    assert cli(tmp_path, "check", "--ignore", "PH001", "a.py").returncode == 0
    assert cli(tmp_path, "check", "a.py").returncode == 1


def test_no_cache_writes_no_cache_dir(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--no-cache", "a.py")
    assert result.returncode == 1
    assert not (tmp_path / CACHE_DIR).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_cache_dir_option(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    result = cli(tmp_path, "check", "--cache-dir", "mycache", "a.py")
    assert result.returncode == 1
    assert (tmp_path / "mycache").is_dir()
    assert not (tmp_path / CACHE_DIR).exists()


def test_cached_results_name_the_file_as_this_run_was_given_it(tmp_path):
    # With a project config the cache lives at the project root, shared by runs
    # from any working directory; a hit must still print this run's path.
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[tool.precision-lint]\nselect = ["PH"]\n')
    write(project / "a.py", HAZARD)
    inside = cli(project, "check", "--output-format", "concise", "a.py")
    assert concise_lines(inside.stdout) == [f"a.py:2:7: PH001 error [*] {MESSAGE}"]
    assert (project / CACHE_DIR).is_dir()
    outside = cli(tmp_path, "check", "--output-format", "concise", "proj/a.py")
    assert concise_lines(outside.stdout) == [f"proj/a.py:2:7: PH001 error [*] {MESSAGE}"]
    as_json = cli(tmp_path, "check", "--output-format", "json", "proj/a.py")
    (finding,) = json.loads(as_json.stdout)
    assert finding["filename"] == str(project / "a.py")
