"""`verify --pytest`: the user's own tests as a precision sanitizer, on a small
project of its own (tests/fixtures/verify_project, copied to a temporary folder):
sites the tests reach and confirm, one whose fix a later statement undoes, one the
tests themselves take past the limit, and one no test executes; and an int32 total,
which the stress pass starts just below 2^31."""
import json
import shutil

import pytest

pytest.importorskip("torch", reason="verify runs torch in its child processes (verify extra)")

from conftest import run_cli  # noqa: E402


@pytest.fixture()
def project(repo_root, tmp_path):
    target = tmp_path / "project"
    shutil.copytree(repo_root / "tests" / "fixtures" / "verify_project", target)
    return target


def sanitize(project, *args: str) -> dict[int, dict]:
    result = run_cli("verify", "--pytest", "counting", "--device", "cpu", "--output-format", "json", *args, cwd=project)
    assert result.returncode in (0, 1), result.stderr
    return {f["line"]: f for f in json.loads(result.stdout)}


def test_reached_not_reached_and_confirmed_sites(project):
    found = sanitize(project)
    verdicts = {line: f["verdict"] for line, f in found.items()}
    assert verdicts == {7: "confirmed", 18: "confirmed", 29: "confirmed", 37: "fix-changed-results", 46: "not-reached"}
    assert all(f["mode"] == "pytest" for f in found.values())
    assert found[46]["reached"] is False and found[7]["reached"] is True
    # the observe pass: what the tests themselves do, as written
    assert found[7]["max_seen"] == 6 and any("took it to 6" in n and "exact" in n for n in found[7]["notes"])
    bf16 = found[29]
    assert bf16["max_seen"] == 257 and any("lost counts" in n for n in bf16["notes"])
    # the stress passes: started near the limit, original and fixed
    assert found[7]["exact"] > 2**24 and found[7]["after"] == found[7]["exact"] != found[7]["before"]
    assert found[18]["function"] == "LabelTally.update"
    assert all(f["inputs"].startswith("real") for f in found.values())
    assert any("pass/fail is ignored" in n for n in found[7]["notes"])


def test_pytest_arguments_after_the_double_dash(project):
    found = sanitize(project, "--", "-k", "zero_entries")
    assert found[7]["verdict"] == "confirmed"
    assert found[18]["verdict"] == "not-reached"  # its test was deselected


INT32_PROJECT = {
    "tokens/__init__.py": "",
    "tokens/tally.py": (
        "import torch\n\n\n"
        "def kept_tokens(batches):\n"
        "    kept = torch.zeros(1, dtype=torch.int32)\n"
        "    for labels in batches:\n"
        "        kept += (labels != -100).sum()\n"
        "    return int(kept.item())\n"
    ),
    "checks/check_tally.py": (
        "import torch\n\nfrom tokens.tally import kept_tokens\n\n\n"
        "def test_kept_tokens():\n"
        "    assert kept_tokens([torch.tensor([1, -100, 3])] * 3) == 6\n"
    ),
    "pytest.ini": "[pytest]\ntestpaths = checks\npython_files = check_*.py\n",
}


def test_an_int32_total_is_driven_from_just_below_its_limit(tmp_path):
    for name, text in INT32_PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = run_cli("verify", "--pytest", "tokens", "--device", "cpu", "--output-format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    (finding,) = json.loads(result.stdout)
    # the stress pass starts it two below 2^31, as the replays do (not at 0, which
    # never passed the limit: `not-driven`)
    assert (finding["line"], finding["verdict"]) == (5, "confirmed"), finding["detail"]
    assert finding["exact"] == 2**31 - 3 + 6 == finding["after"] and finding["before"] < 0
    assert finding["max_seen"] == 6  # the tests themselves, as written
