"""`verify --call MODULE:FUNCTION --inputs MODULE:FACTORY`: the user's own function
on the user's own inputs, with the exact shadow and the start offset (an int32 total
just below 2^31, a float one near 8 x its limit), reported at the site's own
location; and what is checked before anything runs."""
import argparse
import json

import pytest

from conftest import run_cli
from precision_lint.verify import command

METRICS = (
    "import torch\n"
    "def count_positive(batches):\n"
    "    total = torch.zeros(1)\n"
    "    for b in batches:\n"
    "        total += (b > 0).sum()\n"
    "    return total.item()\n"
)
INPUTS = "import torch\ndef inputs(device):\n    return ([torch.ones(3, device=device)] * 5,), {}\n"


def test_call_runs_the_users_function_with_shadow_and_start_offset(tmp_path):
    pytest.importorskip("torch", reason="--call runs the user's torch code in a child process (verify extra)")
    (tmp_path / "metrics.py").write_text(METRICS)
    (tmp_path / "harness.py").write_text(INPUTS)
    result = run_cli(
        "verify", "--call", "metrics:count_positive", "--inputs", "harness:inputs",
        "--device", "cpu", "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (finding,) = json.loads(result.stdout)
    assert (finding["path"].endswith("metrics.py"), finding["line"], finding["column"]) == (True, 3, 13)
    assert finding["mode"] == "call" and finding["function"] == "count_positive"
    assert finding["verdict"] == "confirmed"
    # 15 small counts, started near 8 x 2^24: float32 drops them, int64 keeps them
    assert finding["exact"] == 8 * 2**24 - 64 + 15 == finding["after"] != finding["before"]
    assert finding["max_seen"] == 15  # as written, the call itself only counted 15
    assert finding["reached"] is True


INT32_TALLY = (
    "import torch\n"
    "def count_labels(batches):\n"
    "    total = torch.zeros(1, dtype=torch.int32)\n"
    "    for b in batches:\n"
    "        total += (b != -100).sum()\n"
    "    return total.item()\n"
)
LABELS = "import torch\ndef labels(device):\n    return ([torch.tensor([1, -100, 4, 2], device=device)] * 4,), {}\n"


def test_call_drives_an_int32_total_from_just_below_its_limit(tmp_path):
    pytest.importorskip("torch", reason="--call runs the user's torch code in a child process (verify extra)")
    (tmp_path / "tally.py").write_text(INT32_TALLY)
    (tmp_path / "feed.py").write_text(LABELS)
    result = run_cli("verify", "--call", "tally:count_labels", "--inputs", "feed:labels", "--device", "cpu", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (finding,) = json.loads(result.stdout)
    # the stress pass starts int32 two below 2^31 (as the replays do), not at 0: 12
    # counts wrap it, and the int64 fix started at the same offset keeps them
    assert finding["verdict"] == "confirmed", finding["detail"]
    assert finding["exact"] == 2**31 - 3 + 12 == finding["after"] and finding["before"] < 0
    assert "(started at 2,147,483,645)" in finding["detail"]
    assert finding["max_seen"] == 12  # as written, the call itself only counted 12


def _args(**values):
    defaults = {"plot": None, "pytest": False, "call": None, "inputs": None, "device": "cpu"}
    return argparse.Namespace(**{**defaults, **values})


def test_prerequisites_are_checked_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = command.importlib.util.find_spec
    monkeypatch.setattr(command.importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert "torch is not installed" in command.prerequisites(_args())
    monkeypatch.setattr(command.importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert "matplotlib" in command.prerequisites(_args(plot="x.png"))
    monkeypatch.setattr(command.importlib.util, "find_spec", lambda name, *a: None if name == "pytest" else real(name, *a))
    assert "pytest" in command.prerequisites(_args(pytest=True))


def test_no_cuda_device_is_a_prerequisite_failure(monkeypatch):
    class Probe:
        returncode = 3

    monkeypatch.setattr(command.importlib.util, "find_spec", lambda name, *a: object())
    import subprocess

    monkeypatch.setattr(subprocess, "run", lambda *a, **k: Probe())
    assert "no CUDA device" in command.prerequisites(_args(device="cuda"))


def test_missing_call_module_or_inputs_exit_2_with_the_reason(tmp_path):
    pytest.importorskip("torch", reason="--call runs the user's torch code in a child process (verify extra)")
    missing = run_cli("verify", "--call", "nowhere:f", "--inputs", "nowhere:g", "--device", "cpu", cwd=tmp_path)
    assert missing.returncode == 2 and "cannot find the module 'nowhere'" in missing.stderr
    (tmp_path / "metrics.py").write_text(METRICS)
    no_inputs = run_cli("verify", "--call", "metrics:count_positive", "--device", "cpu", cwd=tmp_path)
    assert no_inputs.returncode == 2 and "--inputs" in no_inputs.stderr
    both = run_cli("verify", "--pytest", "--call", "metrics:count_positive", "--inputs", "metrics:x", cwd=tmp_path)
    assert both.returncode == 2 and "one" in both.stderr
