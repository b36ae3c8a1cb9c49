"""Jupyter notebooks, checked as Ruff checks them: code cells joined (a name from one
cell is known in the next), magics left out, findings placed in their cells
(`nb.ipynb:cell 3:1:7`, JSON `cell`), fixes written back with the JSON layout kept."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import run_cli


def code(source, count=None) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": [], "source": source}


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


def notebook(*cells: dict, language: str = "python") -> dict:
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


# Jupyter's own layout: one-space indent, non-ASCII as is, a final newline
def jupyter_bytes(data: dict) -> bytes:
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


COUNTING = notebook(
    markdown("# Zeros per batch"),
    code(["%matplotlib inline\n", "import torch\n", "!nvidia-smi"], 1),
    code(["acc = torch.zeros(1)\n", "for x in xs:\n", "    acc += (x == 0).sum()\n", "acc?"], 2),
    code("%%bash\necho torch.zeros(1)\n"),
    code(["print(acc.item())  # é"]),
)


def write_notebook(path: Path, data: dict, layout=jupyter_bytes) -> Path:
    path.write_bytes(layout(data))
    return path


def test_annotations_of_a_cell_are_the_notebooks_with_the_cell_said(tmp_path):
    # the fault campaign: a cell's row was given as a line of the .ipynb file's JSON
    write_notebook(tmp_path / "nb.ipynb", COUNTING)

    def output(name: str) -> str:
        return run_cli("check", "--no-cache", "--output-format", name, "nb.ipynb", cwd=tmp_path).stdout

    github = output("github").splitlines()[0]
    assert github.startswith("::error title=precision-lint (PH001),file=nb.ipynb::nb.ipynb:cell 3:1:7: PH001")
    (issue,) = json.loads(output("gitlab"))
    assert issue["location"]["lines"] == {"begin": 1, "end": 1}
    assert issue["description"].startswith("(PH001) cell 3, line 1: `acc` accumulates")
    (entry,) = json.loads(output("sarif"))["runs"][0]["results"]
    assert entry["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": "nb.ipynb", "uriBaseId": "%SRCROOT%"}}}]
    assert entry["message"]["text"].startswith("cell 3, line 1: `acc` accumulates") and "fixes" not in entry
    # its related lines and its fix are kept, placed the same way
    assert entry["relatedLocations"][0]["message"]["text"] == "cell 3, line 3: counts added here"
    assert "region" not in entry["relatedLocations"][0]["physicalLocation"]
    assert entry["properties"]["fix"] == {"description": "Use `dtype=torch.int64`", "applicability": "safe"}


def test_findings_carry_their_cell_in_text_and_json(tmp_path):
    write_notebook(tmp_path / "nb.ipynb", COUNTING)
    result = run_cli("check", "--no-cache", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    # the markdown cell counts (cell 1); magics (`%matplotlib`, `!`, `acc?`) and the
    # %%bash cell are not Python, and are not reported as syntax errors
    assert result.stdout.splitlines()[0].startswith("nb.ipynb:cell 3:1:7: PH001 error [*] `acc` accumulates")
    assert "SyntaxError" not in result.stdout
    as_json = json.loads(run_cli("check", "--no-cache", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    (finding,) = as_json
    assert finding["cell"] == 3 and finding["location"] == {"row": 1, "column": 7}
    assert finding["related"][0]["location"]["row"] == 3
    full = run_cli("check", "--no-cache", "nb.ipynb", cwd=tmp_path).stdout
    assert "1 | acc = torch.zeros(1)\n" in full  # the cell's own line is shown


def test_a_related_line_in_another_cell_names_that_cell(tmp_path):
    data = notebook(code(["import torch\n", "acc = torch.zeros(1)"]), code(["for x in xs:\n", "    acc += (x == 0).sum()\n"]))
    write_notebook(tmp_path / "nb.ipynb", data)
    result = run_cli("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert "nb.ipynb:cell 1:2:7: PH001 error" in result.stdout
    assert "= counts added here: line 2 of cell 2\n" in result.stdout
    sarif = run_cli("check", "--no-cache", "--output-format", "sarif", "nb.ipynb", cwd=tmp_path).stdout
    (entry,) = json.loads(sarif)["runs"][0]["results"]
    assert entry["relatedLocations"][0]["message"]["text"] == "cell 2, line 2: counts added here"


def test_fix_writes_the_cells_back_and_keeps_the_layout(tmp_path):
    path = write_notebook(tmp_path / "nb.ipynb", COUNTING)
    original = path.read_bytes()
    result = run_cli("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout
    expected = original.replace(b'"acc = torch.zeros(1)\\n"', b'"acc = torch.zeros(1, dtype=torch.int64)\\n"')
    assert expected != original and path.read_bytes() == expected
    again = run_cli("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "All checks passed!\n"


def test_other_layouts_are_kept_too(tmp_path):
    data = notebook(code("import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint('ü')\n"))
    two_ascii = lambda d: json.dumps(d, indent=2, ensure_ascii=True).encode()  # no final newline
    path = write_notebook(tmp_path / "nb.ipynb", data, two_ascii)
    original = path.read_bytes()
    assert run_cli("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path).returncode == 0
    # a source kept as one string stays one string
    assert path.read_bytes() == original.replace(b"torch.zeros(1)", b"torch.zeros(1, dtype=torch.int64)")


def test_a_layout_that_cannot_be_kept_is_not_rewritten(tmp_path):
    path = tmp_path / "nb.ipynb"
    odd = jupyter_bytes(COUNTING).replace(b'"cells": [', b'"cells"  :  [')
    path.write_bytes(odd)
    result = run_cli("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 2
    assert "PH901" in result.stdout and "JSON layout" in result.stdout
    assert "PH001" in result.stdout  # the finding stands, unfixed
    assert path.read_bytes() == odd


def test_fixed_imports_stay_sorted_within_their_cell(tmp_path):
    data = notebook(
        code(["import os\n", "\n", "from torch import zeros\n"]),
        code(["acc = zeros(1)\n", "for x in xs:\n", "    acc += (x == 0).sum()\n", "print(os.sep, acc.item())\n"]),
    )
    path = write_notebook(tmp_path / "nb.ipynb", data)
    result = run_cli("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    cells = json.loads(path.read_text())["cells"]
    assert cells[0]["source"] == ["import os\n", "\n", "from torch import int64, zeros\n"]
    assert cells[1]["source"][0] == "acc = zeros(1, dtype=int64)\n"
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "I", "nb.ipynb"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert ruff.returncode == 0, ruff.stdout


def test_diff_shows_each_changed_cell(tmp_path):
    path = write_notebook(tmp_path / "nb.ipynb", COUNTING)
    before = path.read_bytes()
    result = run_cli("check", "--no-cache", "--diff", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert "--- nb.ipynb:cell 3\n+++ nb.ipynb:cell 3\n" in result.stdout
    assert "-acc = torch.zeros(1)\n+acc = torch.zeros(1, dtype=torch.int64)\n" in result.stdout
    assert "precision-lint:" not in result.stdout  # the placeholders and cell markers stay inside
    assert path.read_bytes() == before


def test_add_noqa_writes_into_the_cell(tmp_path):
    path = write_notebook(tmp_path / "nb.ipynb", COUNTING)
    result = run_cli("check", "--no-cache", "--add-noqa=tracked in #12", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(path.read_text())["cells"][2]["source"][0] == "acc = torch.zeros(1)  # noqa: PH001 tracked in #12\n"
    assert run_cli("check", "--no-cache", "nb.ipynb", cwd=tmp_path).returncode == 0


def test_extra_extensions_are_configurable(tmp_path):
    write_notebook(tmp_path / "nb.ipy", COUNTING)
    plain = run_cli("check", "--show-files", ".", cwd=tmp_path)
    assert plain.stdout == ""
    option = run_cli("check", "--no-cache", "--output-format", "concise", "--extension", "ipy:ipynb", ".", cwd=tmp_path)
    assert option.stdout.startswith("nb.ipy:cell 3:1:7: PH001"), option.stdout + option.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.precision-lint]\nextension = { ipy = 'ipynb' }\n")
    configured = run_cli("check", "--show-files", ".", cwd=tmp_path)
    assert configured.stdout == "nb.ipy\n"
    wrong = run_cli("check", "--extension", "ipy:jupyter", ".", cwd=tmp_path)
    assert wrong.returncode == 2 and "unknown language `jupyter`" in wrong.stderr


def test_a_broken_notebook_is_reported_not_passed(tmp_path):
    (tmp_path / "nb.ipynb").write_text('{"cells": [')
    result = run_cli("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 2
    assert "nb.ipynb:1:1: PH901 error Cannot read the notebook: not valid JSON" in result.stdout
    assert "All checks passed" not in result.stdout


def test_verify_says_it_does_not_replay_a_notebook(tmp_path):
    write_notebook(tmp_path / "nb.ipynb", COUNTING)
    result = run_cli("verify", "--device", "cpu", "--output-format", "json", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)
    assert entry["path"] == "nb.ipynb" and entry["verdict"] == "skipped"
    assert "notebooks are not replayed" in entry["detail"]


def test_a_notebook_in_another_language_has_nothing_to_check(tmp_path):
    data = notebook(code(["acc = torch.zeros(1)\n", "acc += (x == 0).sum()\n"]), language="R")
    write_notebook(tmp_path / "nb.ipynb", data)
    result = run_cli("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "All checks passed!\n"


def test_diff_base_keeps_the_findings_of_a_changed_notebook_only(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    path = write_notebook(tmp_path / "nb.ipynb", COUNTING)
    git("add", ".")
    git("commit", "-qm", "base")
    unchanged = run_cli("check", "--no-cache", "--diff-base", "HEAD", ".", cwd=tmp_path)
    assert unchanged.returncode == 0 and unchanged.stdout == "All checks passed!\n"
    data = json.loads(path.read_text())
    data["cells"][4]["source"] = ["print(acc.item(), 'changed')"]
    write_notebook(path, data)
    changed = run_cli("check", "--no-cache", "--output-format", "concise", "--diff-base", "HEAD", ".", cwd=tmp_path)
    assert changed.returncode == 1 and changed.stdout.startswith("nb.ipynb:cell 3:1:7: PH001")


def test_a_notebook_checked_again_unchanged_is_served_from_the_cache(tmp_path):
    # the cache keys a notebook on its code cells joined (what was checked), not on
    # the file's JSON: a lookup that hashed the file never found it, and every run
    # checked every notebook again
    write_notebook(tmp_path / "nb.ipynb", COUNTING)
    assert run_cli("check", "nb.ipynb", cwd=tmp_path).returncode == 1
    (cache_file,) = (tmp_path / ".precision-lint-cache").glob("v*/results-*.json")
    data = json.loads(cache_file.read_text())
    (entry,) = data["entries"].values()
    assert [d["code"] for d in entry["diagnostics"]] == ["PH001"]
    entry["diagnostics"] = []  # what a run served from the cache reports
    cache_file.write_text(json.dumps(data))
    again = run_cli("check", "nb.ipynb", cwd=tmp_path)
    assert again.returncode == 0 and "All checks passed" in again.stdout
    write_notebook(tmp_path / "nb.ipynb", notebook(*COUNTING["cells"], code(["y = 1"])))
    assert run_cli("check", "nb.ipynb", cwd=tmp_path).returncode == 1  # changed: checked again


def test_a_cell_of_one_line_may_call_a_magic_without_its_percent_sign(tmp_path):
    # IPython's automagic runs `pip install x` and `ls ./data` in a cell of one line;
    # in a longer cell, or where Python reads the line (`ls = 1`), it is Python
    cells = notebook(
        code(["pip install sagemaker awscli"]),
        code(["\n", "  ls ./embeddings/\n"]),
        code(["ls = 1"]),
        code(["ls " + "-" * 3000 + "1"]),  # too deep for Python's compiler: no crash
        code(["ls is 1"]),  # Python, with a warning that must not be printed
        code(["import torch\n", "acc = torch.zeros(1)\n", "for x in xs:\n", "    acc += (x == 0).sum()\n"]),
    )
    result = _one_fix_with_the_magics_kept(tmp_path, cells, "cell 6:2:7")
    assert result.returncode == 1 and result.stderr == ""

    longer = write_notebook(tmp_path / "longer.ipynb", notebook(code(["pip install a\n", "import torch\n"])))
    result = run_cli("check", "--no-cache", "--output-format", "concise", longer.name, cwd=tmp_path)
    assert result.stdout.splitlines()[0] == "longer.ipynb:cell 1:1:3: SyntaxError: invalid syntax", result.stdout
    assert result.returncode == 1


def test_a_magic_continued_with_a_backslash_is_left_out_whole(tmp_path):
    # IPython joins `!pip install a \` with its next lines; they are not Python
    continued = notebook(
        code(["!pip install torch \\\n", "    numpy \\\n", "  --quiet\n", "import torch\n", "acc = torch.zeros(1)\n"]),
        code(["%run train.py \\\n", "--steps 10\n", "for x in xs:\n", "    acc += (x == 0).sum()\n"]),
    )
    _one_fix_with_the_magics_kept(tmp_path, continued, "cell 1:5:7")


def _one_fix_with_the_magics_kept(tmp_path, cells: dict, place: str):
    """Checks a notebook whose one finding is `acc`'s PH001 at `place`, fixes it, and
    holds the magics' lines to being written back as they were. The check's result."""
    path = write_notebook(tmp_path / "nb.ipynb", cells)
    result = run_cli("check", "--no-cache", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"nb.ipynb:{place}: PH001 error [*] `acc` accumulates"), result.stdout + result.stderr
    assert lines[1:] == ["Found 1 error.", "[*] 1 fixable with the `--fix` option."]
    original = path.read_bytes()
    assert run_cli("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == original.replace(b"torch.zeros(1)", b"torch.zeros(1, dtype=torch.int64)")
    return result
