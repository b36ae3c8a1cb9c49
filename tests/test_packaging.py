"""The rule modules in the repository's rules/ folder ship inside the wheel as
precision_lint.rules, and the installed package finds them there."""
import subprocess
import sys
import zipfile

import pytest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, repo_root):
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(repo_root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (path,) = out.glob("precision_lint-*.whl")
    return path


def test_wheel_contains_the_rules_as_a_subpackage(wheel, repo_root):
    names = zipfile.ZipFile(wheel).namelist()
    for rule_file in (repo_root / "rules").glob("*.py"):
        assert f"precision_lint/rules/{rule_file.name}" in names
    # every subpackage of the source tree ships (verify included)
    for module in (repo_root / "precision_lint").rglob("*.py"):
        assert module.relative_to(repo_root).as_posix() in names, module
    assert not any(name.startswith("rules/") for name in names)  # no top-level `rules` package
    assert any(name.endswith("entry_points.txt") for name in names)


def test_installed_wheel_finds_the_rules(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # Run from an empty directory with only the wheel's files (and libcst) importable.
    code = "import precision_lint.registry as r, precision_lint; print(precision_lint.__file__); print([x.code for x in r.all_rules()])"
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {code}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert str(target) in result.stdout
    assert "'PH001'" in result.stdout
