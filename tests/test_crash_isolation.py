"""No crash ends the run (issue 11, items 2 and 3): a failure in the model or a rule is
an internal-error diagnostic for its file; a worker that dies costs its file, named; the
input limits stop what libcst cannot parse safely; recursion is bounded for everything
Python accepts."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HAZARD, HAZARD_FIXED, run_cli, run_patched_cli
from precision_lint import engine
from precision_lint.engine import check_source
from precision_lint.limits import InputLimits, _raw_offset_past
from precision_lint.runner import Job, run_jobs

DEFAULT = frozenset({"PH001", "PH002", "PH003", "PH004", "PH005", "PH006"})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


CRASHING_PH006 = """
from precision_lint.registry import rule_by_code_or_name
def crash(self, model):
    raise AttributeError("'float' object has no attribute 'dtype'")
rule_by_code_or_name("PH006").check = crash
"""


# -- in the engine ---------------------------------------------------------------
def test_a_crashing_rule_is_a_diagnostic_naming_it_and_the_other_rules_still_report(monkeypatch):
    from precision_lint.registry import rule_by_code_or_name

    def crash(self, model):
        raise AttributeError("'float' object has no attribute 'dtype'")

    monkeypatch.setattr(rule_by_code_or_name("PH006"), "check", crash)
    found = check_source(HAZARD, "a.py", DEFAULT)
    assert [d.code for d in found] == ["PH900", "PH001"]
    failure = found[0]
    assert failure.message == "Internal error in rule PH006 (float-histogram): AttributeError: 'float' object has no attribute 'dtype'"
    assert failure.note.startswith("This is a bug in precision-lint: please report it") and "test_crash_isolation.py" in failure.note


def test_a_crash_in_the_model_is_a_diagnostic(monkeypatch):
    def crash(module, *args):
        raise KeyError("scope")

    monkeypatch.setattr(engine, "build_model", crash)
    (failure,) = check_source(HAZARD, "a.py", DEFAULT)
    assert failure.code == "PH900" and failure.message == "Internal error in the semantic model: KeyError: 'scope'"


def test_after_a_crash_no_suppression_is_called_unused(monkeypatch):
    # PH001's finding is missing because PH001 crashed: its noqa is not "unused"
    from precision_lint.registry import rule_by_code_or_name

    monkeypatch.setattr(rule_by_code_or_name("PH001"), "check", lambda self, model: 1 / 0)
    source = HAZARD.replace("torch.zeros(1)", "torch.zeros(1)  # noqa: PH001")
    assert [d.code for d in check_source(source, "a.py", frozenset({"PH001", "PH100"}))] == ["PH900"]


# -- through the command line ----------------------------------------------------
def test_a_crashing_rule_costs_one_diagnostic_and_the_run_goes_on(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    write(tmp_path / "b.py", "import torch\nbuf = 0.0\nbuf.scatter_add_(0, idx, torch.ones(3))\n")
    result = run_patched_cli(CRASHING_PH006, "check", "--fix", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "a.py:1:1: PH900 error Internal error in rule PH006 (float-histogram)" in result.stdout
    assert "All checks passed!" not in result.stdout
    assert "not fully checked" in result.stdout
    assert (tmp_path / "a.py").read_text() == HAZARD_FIXED  # the other rules' fixes still apply


def test_a_segfault_costs_its_file_named_and_the_good_files_are_checked_and_fixed(tmp_path):
    # F4: 100,000 nested parentheses (let through by a raised max-nesting) crash
    # libcst's native parser; beside 20 good files that once ended in BrokenProcessPool
    # with the good files rewritten and nothing reported.
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nmax-nesting = 1000000\n")
    write(tmp_path / "deep.py", "import torch\nx = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n")
    for number in range(20):
        write(tmp_path / f"good_{number:02d}.py", HAZARD)
    result = run_cli("check", "--fix", "--show-fixes", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "BrokenProcessPool" not in result.stderr and "Traceback" not in result.stderr
    (crash,) = [line for line in result.stdout.splitlines() if "PH903" in line]
    assert crash.startswith("deep.py:1:1: PH903 error The checker process was killed by SIG")
    assert "Found 21 errors (20 fixed, 1 remaining)." in result.stdout
    assert "Fixed 20 errors:" in result.stdout
    for number in range(20):
        assert (tmp_path / f"good_{number:02d}.py").read_text() == HAZARD_FIXED


def test_nesting_past_the_limit_is_reported_where_it_is_and_not_parsed(tmp_path):
    # 2,000 nested parentheses once segfaulted the whole run (exit 139, no output)
    write(tmp_path / "deep.py", "import torch\n\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\n")
    write(tmp_path / "a.py", HAZARD)
    result = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stdout.splitlines() if ": PH" in line]
    assert lines[0].startswith("a.py:2:7: PH001")
    assert lines[1] == "deep.py:3:205: PH902 error Brackets nest deeper than 200 levels here (`max-nesting`): the file was not checked"


def test_the_nesting_limit_is_a_setting_and_counts_real_brackets_only(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nmax-nesting = 3\n")
    write(tmp_path / "strings.py", "import torch\nx = '((((((((' + f(((1)))\n")
    write(tmp_path / "deep.py", "import torch\nx = f((((1))))\n")
    result = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert [line.split(" Brackets")[0] for line in result.stdout.splitlines() if "PH902" in line] == ["deep.py:2:9: PH902 error"]


@pytest.mark.parametrize(
    "text",
    ["", "(((", "((((", "))))((((", ")(" * 6, "x = '\u00e9((' + f((1))", "a[b{c(d)}]" * 3, "((((" + ")" * 8 + "((((("],
)
def test_the_quick_bracket_count_agrees_with_counting_one_by_one(text):
    # brackets are counted in C (a closer with no opener before it undone there too)
    # and, past the limit, one by one to find where: the same first place either way
    def one_by_one(limit):
        depth = 0
        for at, char in enumerate(text):
            if char in "([{":
                depth += 1
                if depth > limit:
                    return at
            elif char in ")]}" and depth > 0:
                depth -= 1
        return None

    for limit in (1, 3, 4):
        assert _raw_offset_past(text, limit) == one_by_one(limit), limit


def test_a_file_over_the_size_limit_is_reported_and_a_file_never_parsed_is_not(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nmax-file-size = 1000\n")
    write(tmp_path / "big.py", HAZARD + "# padding\n" * 200)
    write(tmp_path / "data.py", "TABLE = [\n" + "    1,\n" * 500 + "]\n")  # no torch: never parsed
    write(tmp_path / "a.py", HAZARD)
    result = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2
    limits = [line for line in result.stdout.splitlines() if "PH902" in line]
    assert limits == [f"big.py:1:1: PH902 error The file is {len(HAZARD) + 2000:,} bytes, over the limit of 1,000 (`max-file-size`): it was not checked"]
    assert "a.py:2:7: PH001" in result.stdout


@pytest.mark.parametrize("key, value", [("max-nesting", "0"), ("max-file-size", '"big"')])
def test_bad_limit_settings_are_config_errors(tmp_path, key, value):
    write(tmp_path / "pyproject.toml", f"[tool.precision-lint]\n{key} = {value}\n")
    write(tmp_path / "a.py", HAZARD)
    result = run_cli("check", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert f"`{key}` must be a positive integer" in result.stderr


# -- recursion: everything Python accepts ------------------------------------------
def _accumulated(expression: str) -> str:
    return f"import torch\nacc = torch.zeros(1)\nfor g in gs:\n    acc += (g == 0).sum()\n    y = {expression}\nprint(acc.item())\n"


def python_accepts(source: str) -> bool:
    """In a fresh interpreter, under the default recursion limit (pytest's own frames
    would lower what the compiler accepts here)."""
    check = subprocess.run([sys.executable, "-c", "import sys; compile(sys.stdin.read(), 'a.py', 'exec')"], input=source, text=True, capture_output=True)
    return check.returncode == 0


FIXED = {  # the sizes the fault campaign found, checked and fixed
    "a sum of 320 terms": " + ".join(["g.numel()"] * 320),
    "328 chained calls": "f" + "()" * 328,
    "an attribute chain 982 deep": "a" + ".b" * 982,
}
CHECKED = {  # near what Python accepts; checked only (libcst takes seconds to parse these)
    "an attribute chain 2,950 deep": "a" + ".b" * 2950,
    "a sum of 2,950 terms": "+".join(["a"] * 2950),
}


@pytest.mark.parametrize("expression", list(FIXED.values()), ids=list(FIXED))
def test_deep_expressions_python_accepts_are_checked_and_fixed(tmp_path, expression):
    # F3: these raised RecursionError in the model
    source = _accumulated(expression)
    assert python_accepts(source)
    path = write(tmp_path / "a.py", source)
    (report,) = run_jobs([Job(str(path), DEFAULT, "fix")])
    assert [d.code for d in report.diagnostics] == []
    assert [d.code for d in report.fixed] == ["PH001"]
    assert path.read_text() == source.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")


@pytest.mark.parametrize("expression", list(CHECKED.values()), ids=list(CHECKED))
def test_expressions_as_deep_as_python_accepts_are_checked(tmp_path, expression):
    source = _accumulated(expression)
    assert python_accepts(source)
    path = write(tmp_path / "a.py", source)
    (report,) = run_jobs([Job(str(path), DEFAULT)])
    assert [(d.code, d.location.row) for d in report.diagnostics] == [("PH001", 2)]


def test_the_worker_protects_the_limits_it_is_given(tmp_path):
    path = write(tmp_path / "a.py", HAZARD)
    (report,) = run_jobs([Job(str(path), DEFAULT, limits=InputLimits(max_file_size=10))])
    assert [d.code for d in report.diagnostics] == ["PH902"]


def test_json_output_carries_failures(tmp_path):
    write(tmp_path / "deep.py", "import torch\nx = " + "[" * 300 + "]" * 300 + "\n")
    result = run_cli("check", "--no-cache", "--output-format", "json", "deep.py", cwd=tmp_path)
    assert result.returncode == 2
    (entry,) = json.loads(result.stdout)
    assert (entry["code"], entry["name"], entry["severity"]) == ("PH902", "input-limit", "error")
    assert entry["location"] == {"row": 2, "column": 205}
