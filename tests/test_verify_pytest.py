"""`verify --pytest`: the user's own tests as a precision sanitizer, on a small
project of its own (tests/fixtures/verify_project, copied to a temporary folder):
sites the tests reach and confirm, one whose fix a later statement undoes, one the
tests themselves take past the limit, and one no test executes."""
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
