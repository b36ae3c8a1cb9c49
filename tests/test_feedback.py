"""Feedback while and after a run: a progress line on a terminal's stderr (not with
--quiet, not when piped), `--color`/NO_COLOR/FORCE_COLOR, and rule links (JSON
`url`, SARIF `helpUri`, terminal hyperlinks) to the pages in docs/rules/, which are
generated from the rule docstrings and kept in sync here."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HAZARD, REPO, run_cli

from precision_lint.registry import all_rules
from precision_lint.rule_pages import render

ESC = "\x1b["
DOCS = "https://docs.precision-lint.test/latest"


def run_with_terminal_stderr(cwd: Path, *args: str, patch: str = "") -> tuple[int, str]:
    """The CLI with stderr on a pseudo-terminal (stdout piped), after `patch`."""
    primary, secondary = pty.openpty()
    script = f"import sys\n{patch}\nfrom precision_lint.cli import main\nsys.exit(main({list(args)!r}))\n"
    process = subprocess.Popen([sys.executable, "-c", script], cwd=cwd, stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.communicate(timeout=120)
    os.close(primary)
    return process.returncode, b"".join(chunks).decode("utf-8", "replace")


def test_progress_shows_on_a_terminal_once_the_run_is_slow(tmp_path):
    for number in range(3):
        (tmp_path / f"m{number}.py").write_text(HAZARD)
    # the run is not slow here: DELAY=0 stands for "it has taken more than a second"
    patch = "import precision_lint.progress as p; p.DELAY = 0; p.INTERVAL = 0"
    code, stderr = run_with_terminal_stderr(tmp_path, "check", "--no-cache", ".", patch=patch)
    assert code == 1
    assert "\rchecked 3/3 files (" in stderr
    assert stderr.rstrip(" ").endswith("\r")  # the line is wiped at the end
    quiet_code, quiet = run_with_terminal_stderr(tmp_path, "check", "--no-cache", "-q", ".", patch=patch)
    assert quiet_code == 1 and "checked" not in quiet


def test_verify_shows_progress_too(tmp_path):
    (tmp_path / "clean.py").write_text("import torch\nx = torch.zeros(3, dtype=torch.int64)\n")
    patch = "import precision_lint.progress as p; p.DELAY = 0; p.INTERVAL = 0"
    code, stderr = run_with_terminal_stderr(tmp_path, "verify", "--device", "cpu", ".", patch=patch)
    assert code == 0
    assert "\rverified 1/1 files (" in stderr
    assert stderr.rstrip(" ").endswith("\r")
    quiet_code, quiet = run_with_terminal_stderr(tmp_path, "verify", "--device", "cpu", "-q", ".", patch=patch)
    assert quiet_code == 0 and "verified" not in quiet


def test_no_progress_when_fast_or_piped(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    code, stderr = run_with_terminal_stderr(tmp_path, "check", "--no-cache", ".")
    assert code == 1 and "checked" not in stderr  # under a second: nothing
    piped = subprocess.run(
        [sys.executable, "-c", "import sys, precision_lint.progress as p; p.DELAY = 0\n"
         "from precision_lint.cli import main; sys.exit(main(['check', '--no-cache', '.']))"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert piped.returncode == 1 and piped.stderr == ""


def test_color_follows_the_option_and_the_environment(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}

    def run(*args: str, **env: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "precision_lint", "check", "--no-cache", *args, "."],
            cwd=tmp_path, capture_output=True, text=True, env={**base, **env},
        )  # fmt: skip
        assert result.returncode == 1, result.stderr
        return result.stdout

    assert ESC not in run()  # piped: plain
    coloured = run("--color", "always")
    assert f"{ESC}1;31mPH001{ESC}0m" in coloured and f"{ESC}1;31merror{ESC}0m" in coloured
    assert ESC in run(FORCE_COLOR="1")
    assert ESC not in run(FORCE_COLOR="1", NO_COLOR="1")
    assert ESC not in run("--color", "never", FORCE_COLOR="1")
    assert ESC in run("--color", "always", NO_COLOR="1")  # the option is explicit
    assert ESC not in run("--output-format", "json", "--color", "always")


@pytest.fixture
def documented(tmp_path) -> dict[str, str]:
    """An environment whose installed precision-lint names a Documentation URL (a
    distribution's metadata, found before the real one on sys.path)."""
    site = tmp_path / "site"
    info = site / "precision_lint-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: precision-lint\nVersion: 0.1.0\nProject-URL: Documentation, {DOCS}\n"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


def cli_env(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "precision_lint", *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_rule_links_come_from_the_documentation_url(tmp_path, documented):
    (tmp_path / "a.py").write_text(HAZARD)
    as_json = json.loads(cli_env(tmp_path, documented, "check", "--no-cache", "--output-format", "json", ".").stdout)
    assert as_json[0]["url"] == f"{DOCS}/rules/PH001.md"
    sarif = json.loads(cli_env(tmp_path, documented, "check", "--no-cache", "--output-format", "sarif", ".").stdout)
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["PH003"]["helpUri"] == f"{DOCS}/rules/PH003.md"
    terminal = cli_env(tmp_path, documented, "check", "--no-cache", "--color", "always", ".").stdout
    assert f"\x1b]8;;{DOCS}/rules/PH001.md\x1b\\" in terminal
    rule = json.loads(cli_env(tmp_path, documented, "rule", "PH001", "--output-format", "json").stdout)
    assert rule["url"] == f"{DOCS}/rules/PH001.md"


def test_no_link_without_a_real_documentation_url(tmp_path, documented):
    (tmp_path / "a.py").write_text(HAZARD)
    placeholder = Path(documented["PYTHONPATH"].split(os.pathsep)[0]) / "precision_lint-0.1.0.dist-info" / "METADATA"
    placeholder.write_text(placeholder.read_text().replace(DOCS, "https://github.com/OWNER/precision-lint/docs"))
    for env in (documented, {**os.environ}):  # a placeholder, and this checkout's own metadata
        out = cli_env(tmp_path, env, "check", "--no-cache", "--output-format", "json", ".").stdout
        assert json.loads(out)[0]["url"] is None
        sarif = cli_env(tmp_path, env, "check", "--no-cache", "--output-format", "sarif", ".").stdout
        assert "helpUri" not in sarif and "OWNER" not in sarif
        assert "\x1b]8;;" not in cli_env(tmp_path, env, "check", "--no-cache", "--color", "always", ".").stdout


def test_rule_pages_match_the_rule_docstrings():
    folder = REPO / "docs" / "rules"
    expected = {f"{rule.code}.md": render(rule) for rule in all_rules()}
    present = {path.name: path.read_text(encoding="utf-8") for path in folder.glob("*.md")}
    stale = sorted(name for name in expected if present.get(name) != expected[name])
    assert not stale, f"{stale} differ from the rules: run `python -m precision_lint.rule_pages docs/rules`"
    assert sorted(present) == sorted(expected), "pages of rules that no longer exist"


def test_rule_command_prints_the_page(tmp_path):
    result = run_cli("rule", "PH002", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == (REPO / "docs" / "rules" / "PH002.md").read_text(encoding="utf-8")


def test_the_packages_own_urls_are_not_placeholders():
    from precision_lint.config import tomllib
    from precision_lint.rule_pages import is_placeholder

    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"].get("urls", {})
    assert not [url for url in urls.values() if is_placeholder(url)], urls
