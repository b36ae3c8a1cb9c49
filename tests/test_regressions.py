"""Regression tests for bugs found in review, each run as a user would hit it."""
import subprocess
import pytest

from conftest import HAZARD, run_cli
from precision_lint.engine import check_source
from precision_lint.fixer import fix_source

PH001 = frozenset({"PH001"})


def test_alpha_scaled_adds_are_not_counts():
    source = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc.add_((x == 0).sum(), alpha=0.5)\n    torch.add(acc, x.numel(), alpha=0.25, out=acc)\n"
    assert check_source(source, "a.py", PH001) == []


def test_factory_with_kwargs_has_an_unknown_dtype():
    source = "import torch\nacc = torch.zeros(1, **opts)\nfor x in xs:\n    acc += (x == 0).sum()\n"
    assert check_source(source, "a.py", PH001) == []


def test_import_is_never_added_inside_a_block():
    source = "try:\n    from torch import zeros\nexcept ImportError:\n    raise\nacc = zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc)\n"
    (finding,) = check_source(source, "a.py", PH001)
    assert finding.fix is None and "binds no name for `torch`" in finding.note
    assert fix_source(source, "a.py", PH001).source == source


def test_huge_float_start_is_not_rewritten():
    source = "import torch\nacc = torch.tensor(1e30)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc)\n"
    (finding,) = check_source(source, "a.py", PH001)
    assert finding.fix is None and "does not fit in int64" in finding.note


def test_noqa_after_a_form_feed_still_applies():
    source = "import torch\n\x0c\nacc = torch.zeros(1)  # noqa: PH001\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc)\n"
    assert check_source(source, "a.py", frozenset({"PH001", "PH100"})) == []


def test_stdin_honours_output_file_and_shows_the_stdin_source(tmp_path):
    (tmp_path / "a.py").write_text("# a different file on disk\n")
    result = run_cli("check", "-", "--stdin-filename", "a.py", "-o", "out/report.txt", cwd=tmp_path, stdin=HAZARD)
    assert result.returncode == 1 and result.stdout == ""
    report = (tmp_path / "out" / "report.txt").read_text()
    assert "2 | acc = torch.zeros(1)" in report


def test_excludes_do_not_match_folders_above_the_given_path(tmp_path):
    project = tmp_path / "build" / "proj"
    (project / "venv").mkdir(parents=True)
    (project / "a.py").write_text(HAZARD)
    (project / "venv" / "b.py").write_text(HAZARD)
    result = run_cli("check", "--no-cache", "--output-format", "concise", "build/proj", cwd=tmp_path)
    assert result.returncode == 1
    assert "build/proj/a.py:2:7: PH001" in result.stdout and "b.py" not in result.stdout


def test_diff_base_reads_file_names_git_quotes(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "base.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "base")
    for name in ("a b.py", "café.py", 'q"x.py'):
        (tmp_path / name).write_text(HAZARD)
    git("add", ".")
    result = run_cli("check", "--no-cache", "--output-format", "concise", "--diff-base", "HEAD", ".", cwd=tmp_path)
    flagged = sorted(line.split(":")[0] for line in result.stdout.splitlines() if ": PH001" in line)
    assert flagged == ["a b.py", "café.py", 'q"x.py']
    refused = run_cli("check", "--fix", "--diff-base", "HEAD", ".", cwd=tmp_path)
    assert refused.returncode == 2 and "cannot be combined with --fix" in refused.stderr


def test_verify_reports_an_unreadable_file_and_goes_on(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"# -*- coding: utf-8 -*-\nx = '\xff'\n")
    (tmp_path / "good.py").write_text("x = 1\n")
    result = run_cli("verify", ".", "--device", "cpu", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert '"verdict": "skipped"' in result.stdout and "cannot read" in result.stdout


def test_dtype_is_added_after_a_parenthesized_shape():
    # libcst's position of a tuple excludes its parentheses: the edit must follow the argument
    source = "import torch\na = torch.zeros((2, 3))\nb = torch.zeros(())\nfor g in gs:\n    a += (g == 0).sum()\n    b += g.numel()\nprint(a, b)\n"
    outcome = fix_source(source, "a.py", PH001)
    assert outcome.error is None
    assert "torch.zeros((2, 3), dtype=torch.int64)" in outcome.source
    assert "torch.zeros((), dtype=torch.int64)" in outcome.source


def test_dtype_is_dropped_after_a_parenthesized_argument():
    source = "import torch\nn = torch.sum((p == y), dtype=torch.float16)\n"
    outcome = fix_source(source, "a.py", frozenset({"PH002"}), unsafe=True)
    assert outcome.error is None and outcome.source == "import torch\nn = torch.sum((p == y))\n"


ELEMENT_COUNT_ADDENDS = [
    "b.nonzero().size(0)",
    "labels[labels != -100].shape[0]",
    "len(x.view(-1))",
    "x.flatten().size(0)",
    "torch.nonzero(x).shape[0]",
    "x.size(0) * 2048",
    "(m.reshape(-1, 1).reshape(m.reshape(-1, 1).shape[0], -1).sum(-1) > 0).sum()",
    "(m.reshape(m.shape[0], -1).sum(-1).unsqueeze(1) == class_ids).sum()",
]


@pytest.mark.parametrize("addend", ELEMENT_COUNT_ADDENDS)
def test_element_counts_are_not_taken_for_sample_counts(addend):
    # review: these count elements or tokens, so PH001 (on by default) must report them
    source = f"import torch\nn = torch.zeros(1)\nfor x, b, m, labels in batches:\n    n += {addend}\nprint(n)\n"
    codes = [d.code for d in check_source(source, "a.py", frozenset({"PH001", "PH201"}))]
    assert codes == ["PH001"]


def test_a_float_token_count_packed_with_a_length_is_still_a_count():
    source = (
        "import torch\nimport torch.distributed as dist\n"
        "n_tok = (labels != -100).sum().float()\n"
        "packed = torch.cat([loss.float().view(1), n_tok.view(1), torch.tensor([len(batch)]).view(1)])\n"
        "dist.all_reduce(packed)\n"
    )
    codes = sorted(d.code for d in check_source(source, "a.py", frozenset({"PH002", "PH003"})))
    assert codes == ["PH002", "PH003"]


def test_positions_reduced_to_parity_are_not_positions():
    source = "import torch\neven = (torch.arange(n) % 2).to(torch.bfloat16)\nband = (torch.arange(n) & 1).half()\n"
    assert check_source(source, "a.py", frozenset({"PH004"})) == []


def test_python_float_used_as_a_scatter_buffer_is_no_crash():
    # F2 of the fault campaign: PH006 read the dtype of a Python float
    source = "import torch\nbuf = 0.0\nbuf.scatter_add_(0, idx, torch.ones(3))\n"
    assert check_source(source, "a.py", frozenset({"PH006"})) == []


def test_await_and_yield_from_are_evaluated():
    # `await x` has no `.value` in libcst: the model read it and crashed (diffusers)
    source = "import torch\nasync def f(q):\n    acc = torch.zeros(1)\n    acc += await q.get()\n    yield from range(3)\n    print(acc)\n"
    assert check_source(source, "a.py", frozenset({"PH001"})) == []
