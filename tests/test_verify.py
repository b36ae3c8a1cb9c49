"""`precision-lint verify` on the CPU: every verdict, class-attribute accumulators,
aliases, loops with filters left out, all-reduces over two real gloo ranks, and
replays that crash or run too long. Each replay runs torch in a child process."""
import json
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="verify runs torch in its child processes (verify extra)")

from conftest import run_cli  # noqa: E402
from precision_lint.verify.runner import ERROR, Options, Result, _run  # noqa: E402

FLOAT32_LIMIT = 2**24


def verify(tmp_path: Path, source: str, *args: str) -> tuple[list[dict], object]:
    (tmp_path / "train.py").write_text(source)
    result = run_cli("verify", "train.py", "--output-format", "json", "--device", "cpu", *args, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout), result


def test_megatron_shaped_example_is_confirmed_on_one_and_two_ranks(repo_root, tmp_path):
    source = (repo_root / "examples" / "count_zeros.py").read_text()
    for world_size in ("1", "2"):
        (finding,), result = verify(tmp_path, source, "--world-size", world_size)
        assert result.returncode == 0
        assert finding["verdict"] == "confirmed"
        assert finding["function"] == "count_zero_gradients"
        assert (finding["dtype_before"], finding["dtype_after"]) == ("float32", "int64")
        assert finding["exact"] > FLOAT32_LIMIT * int(world_size)
        assert finding["after"] == finding["exact"] != finding["before"]
        assert finding["abs_error_before"] == abs(finding["before"] - finding["exact"]) > 0
        assert finding["abs_error_after"] == 0
        assert finding["world_size"] == int(world_size) and finding["device"] == "cpu"
        # the filter and the helper it calls are not replayed, and the report says so
        assert any("is_shared(param)" in item for item in finding["left_out"])


def test_class_attribute_accumulators_with_settings_from_init(repo_root, tmp_path):
    findings, _ = verify(tmp_path, (repo_root / "examples" / "eval_metrics.py").read_text())
    assert [(f["line"], f["verdict"]) for f in findings] == [(10, "confirmed"), (11, "confirmed")]
    assert {f["function"] for f in findings} == {"TokenAccuracy.update"}


def test_aliases_and_bfloat16(tmp_path):
    source = (
        "import torch as th\n"
        "from torch import zeros as z, bfloat16 as bf16\n"
        "def seen(batches):\n"
        "    n = z(1, dtype=bf16)\n"
        "    for b in batches:\n"
        "        n = th.add(n, b.size(0))\n"
        "    print(n.item())\n"
    )
    (finding,), _ = verify(tmp_path, source)
    assert finding["verdict"] == "confirmed" and finding["dtype_before"] == "bfloat16"
    assert finding["exact"] > 256 and finding["after"] == finding["exact"]


def test_float64_is_not_driven_to_2_53(tmp_path):
    source = "import torch\ndef f(xs):\n    n = torch.zeros(1, dtype=float)\n    for x in xs:\n        n += (x == 0).sum()\n    print(n.item())\n"
    (finding,), result = verify(tmp_path, source)
    assert result.returncode == 0
    assert finding["verdict"] == "not-reproduced" and "not driven" in finding["detail"]
    assert finding["before"] == finding["after"] == finding["exact"]


def test_fix_that_raises_is_fix_failed(tmp_path):
    # `w` is of unknown type (an unsafe fix); at run time it is a float: int64 += float raises
    source = "import torch\ndef f(xs, ws):\n    acc = torch.zeros(1)\n    for x, w in zip(xs, ws):\n        acc += (x == 0).sum()\n        acc += w\n    return acc\n"
    (finding,), result = verify(tmp_path, source)
    assert result.returncode == 1
    assert finding["verdict"] == "fix-failed" and "can't be cast" in finding["detail"]


def test_fix_scaled_in_place_afterwards_is_fix_failed(tmp_path):
    # `torch.mul(..., out=acc)` is not modelled, so the rule offers an unsafe fix;
    # replayed, the scaling after the adds raises on int64
    source = "import torch\ndef f(xs):\n    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    torch.mul(acc, 0.5, out=acc)\n    return acc\n"
    (finding,), _ = verify(tmp_path, source)
    assert finding["verdict"] == "fix-failed" and "after the adds" in finding["detail"]


def test_fix_that_silently_turns_float_again_changes_results(tmp_path):
    source = "import torch\ndef f(xs, ws):\n    acc = torch.zeros(1)\n    for x, w in zip(xs, ws):\n        acc = acc + (x == 0).sum()\n        acc = acc + w\n    return acc\n"
    (finding,), result = verify(tmp_path, source)
    assert result.returncode == 1
    assert finding["verdict"] == "fix-changed-results"
    assert finding["after"] != finding["exact"]


def test_no_harness_is_skipped_with_a_reason(tmp_path):
    source = "import torch\ndef f(xs, flag):\n    acc = torch.zeros(1) if flag else torch.zeros(2)\n    for x in xs:\n        acc += (x == 0).sum()\n    print(acc)\n"
    findings, result = verify(tmp_path, source)
    assert result.returncode == 0
    assert findings and all(f["verdict"] == "skipped" and f["detail"] for f in findings)


def test_replay_that_cannot_run_the_original_is_an_error(tmp_path):
    source = "import torch\ndef f(xs):\n    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x.no_such_method() == 0).sum()\n    print(acc)\n"
    (finding,), result = verify(tmp_path, source)
    assert result.returncode == 1
    assert finding["verdict"] == "error" and "could not be replayed" in finding["detail"]


def _harness(**overrides) -> dict:
    harness = {
        "function": "f", "accumulator": "acc", "dtype": "float32", "limit": FLOAT32_LIMIT,
        "imports": ["import torch"], "setup": [], "before_creation": [], "creation_before": "acc = torch.zeros(1)",
        "creation_after": "acc = torch.zeros(1, dtype=torch.int64)", "slice": [],
        "adds": [{"statement": "acc += (x == 0).sum()", "addend": "(x == 0).sum()", "sign": 1}],
        "collectives": [], "post": [], "left_out": [],
        "inputs": {"x": {"attributes": [], "string_index": False, "device": False, "scalar": False}},
    }  # fmt: skip
    harness.update(overrides)
    return harness


def test_a_replay_process_that_dies_is_reported_and_others_go_on():
    crashed = Result("PH001", "train.py", 3, 11)
    _run(_harness(imports=["import os", "os._exit(9)"]), crashed, Options(device="cpu"))
    assert crashed.verdict == ERROR and "exit 9" in crashed.detail
    fine = Result("PH001", "train.py", 3, 11)
    _run(_harness(), fine, Options(device="cpu"))
    assert fine.verdict == "confirmed"


def test_a_replay_past_the_timeout_is_stopped():
    slow = Result("PH001", "train.py", 3, 11)
    _run(_harness(imports=["import torch, time", "time.sleep(60)"]), slow, Options(device="cpu", timeout=3))
    assert slow.verdict == ERROR and "--timeout" in slow.detail


def test_markdown_and_check_fix_verify_gate(tmp_path):
    good = "import torch\ndef f(xs):\n    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    print(acc.item())\n"
    risky = "import torch\ndef g(xs, ws):\n    acc = torch.zeros(1)\n    for x, w in zip(xs, ws):\n        acc += (x == 0).sum()\n        acc += w\n    return acc\n"
    (tmp_path / "good.py").write_text(good)
    (tmp_path / "risky.py").write_text(risky)
    markdown = run_cli("verify", ".", "--device", "cpu", "--output-format", "markdown", cwd=tmp_path)
    assert markdown.stdout.startswith("## precision-lint verify")
    assert "| confirmed | good.py:3 |" in markdown.stdout and "| fix-failed | risky.py:3 |" in markdown.stdout
    gated = run_cli("check", "--fix", "--unsafe-fixes", "--verify", "--device", "cpu", "--no-cache", ".", cwd=tmp_path)
    assert "dtype=torch.int64" in (tmp_path / "good.py").read_text()
    assert (tmp_path / "risky.py").read_text() == risky  # its fix failed verification: not written
    assert gated.returncode == 1 and "risky.py:3: fix-failed" in gated.stderr


def test_call_runs_the_users_function_original_and_fixed(tmp_path):
    (tmp_path / "metrics.py").write_text(
        "import torch\n"
        "def count_positive(batches):\n"
        "    total = torch.zeros(1)\n"
        "    for b in batches:\n"
        "        total += (b > 0).sum()\n"
        "    return total.item()\n"
    )
    (tmp_path / "harness.py").write_text(
        "import torch\n"
        "def inputs(device):\n"
        "    big = torch.ones(2**24, device=device)\n"
        "    return ([big] + [torch.ones(1, device=device)] * 5,), {}\n"
    )
    result = run_cli(
        "verify", "--call", "metrics:count_positive", "--inputs", "harness:inputs",
        "--device", "cpu", "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    (finding,) = json.loads(result.stdout)
    assert result.returncode == 0, result.stderr
    assert finding["verdict"] == "confirmed"
    assert finding["after"] == finding["exact"] == 2**24 + 5
    assert finding["before"] == 2**24


def test_plot_is_written(tmp_path, repo_root):
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (installed by the test extra)")
    (tmp_path / "count_zeros.py").write_text((repo_root / "examples" / "count_zeros.py").read_text())
    result = run_cli("verify", ".", "--device", "cpu", "--world-size", "1", "--plot", "errors.png", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "errors.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sample_count_accumulator_is_replayed_when_selected(tmp_path):
    source = (
        "import torch\n"
        "def count_seen(batches):\n"
        "    seen = torch.zeros(1)\n"
        "    for b in batches:\n"
        "        seen += b.shape[0]\n"
        "    return int(seen.item())\n"
    )
    (finding,), _ = verify(tmp_path, source, "--select", "PH201")
    assert finding["code"] == "PH201" and finding["verdict"] == "confirmed"
    assert finding["after"] == finding["exact"] > FLOAT32_LIMIT
    assert finding["before"] != finding["exact"]
