"""PH004 replays under the autocast the project runs them in: positions that enter a
matmul in a layer whose callers autocast (the project's evidence), or inside a `with
torch.autocast(...)` of their own function, are replayed with the calls under
`torch.autocast(device_type, dtype)`, before and after the fix, and the report says
so in a `dtype:` note. Positions that only meet an outer product, or a layer in a
project that never autocasts, replay as before. Before, these replays ran without
autocast, and a `torch.autocast("cuda")` region of the source failed on the CPU."""
import json
from pathlib import Path

import pytest
from conftest import run_cli

from precision_lint.registry import all_rules
from precision_lint.verify.findings import project_findings
from precision_lint.verify.program import ReplayBuilder
from precision_lint.verify.sites import find_site
from precision_lint.verify.source_view import SourceIndex
from precision_lint.verify.under_autocast import replay_autocast

CODES = frozenset(rule.code for rule in all_rules())

LAYER = '''import torch
import torch.nn as nn


class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, n):
        t = torch.arange(n, device=self.inv_freq.device).type_as(self.inv_freq)
        freqs = t[:, None] @ self.inv_freq[None, :]
        return freqs.cos(), freqs.sin()
'''
BF16_CALLER = '''

def train_step(model, batch):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(batch)
'''
SCALER_CALLER = '''

def make_scaler():
    return torch.cuda.amp.GradScaler()
'''
COORDS = '''

class Coords(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(1, d)
        self.register_buffer("scale", torch.ones(1))

    def forward(self, n):
        ids = torch.arange(n).type_as(self.scale)
        return self.proj(ids[:, None])
'''
OUTER_LAYER = LAYER.replace("t[:, None] @ self.inv_freq[None, :]", "torch.outer(t, self.inv_freq)")
REGIONS = '''import torch


def fp16_angles(inv_freq, n):
    t = torch.arange(n, dtype=torch.bfloat16)
    with torch.autocast("cuda", dtype=torch.float16):
        return t[:, None] @ inv_freq[None, :].to(t.dtype)


def cpu_default_angles(inv_freq, n):
    t = torch.arange(n, dtype=torch.bfloat16)
    with torch.autocast("cpu"):
        return t[:, None] @ inv_freq[None, :].to(t.dtype)


def outer_angles(inv_freq, n):
    t = torch.arange(n, dtype=torch.bfloat16)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return torch.outer(t, inv_freq.to(t.dtype))
'''


def decisions(tmp_path: Path, source: str) -> dict[int, tuple[str, str] | None]:
    """Per PH004 finding with a fix (by line), the autocast its replay runs under."""
    path = tmp_path / "rope.py"
    path.write_text(source)
    (found,), _ = project_findings([path], lambda _: CODES)
    model = found.model()
    index = SourceIndex(model, found.text)
    out = {}
    for item in found.findings:
        if item.diagnostic.code == "PH004":
            out[item.diagnostic.location.row] = replay_autocast(found, item, index, find_site(index, model, item.diagnostic))
    return out


def test_a_layer_whose_callers_autocast_is_replayed_under_that_autocast(tmp_path):
    found = decisions(tmp_path, LAYER + COORDS + BF16_CALLER)
    rotary, coords = found[11], found[23]
    assert rotary.dtype == "bfloat16" and (rotary.op, rotary.line) == ("t[:, None] @ self.inv_freq[None, :]", 12)
    assert "callers the project runs under autocast" in rotary.why and 'torch.autocast("cuda", dtype=torch.bfloat16)' in rotary.why
    assert (coords.dtype, coords.op, coords.line) == ("bfloat16", "self.proj(ids[:, None])", 24)  # an nn.Linear
    (scaler,) = decisions(tmp_path, LAYER + SCALER_CALLER).values()
    assert scaler.dtype == "float16" and "GradScaler" in scaler.why  # a GradScaler scales float16 training


def test_no_autocast_without_the_projects_evidence_or_a_matmul(tmp_path):
    assert list(decisions(tmp_path, LAYER).values()) == [None]  # nothing says the callers autocast
    assert list(decisions(tmp_path, OUTER_LAYER + BF16_CALLER).values()) == [None]  # an outer product stays float32


def test_a_region_of_the_function_names_its_dtype_or_the_devices_default(tmp_path):
    found = decisions(tmp_path, REGIONS)
    assert found[5][:2] == ("float16", 'inside `torch.autocast("cuda", dtype=torch.float16)` at line 6')
    assert found[11][:2] == ("bfloat16", 'inside `torch.autocast("cpu")` at line 12')  # the CPU's default
    assert found[17] is None


def test_a_region_on_cuda_runs_on_the_replays_device_type(tmp_path):
    path = tmp_path / "rope.py"
    path.write_text(REGIONS)
    (found,), _ = project_findings([path], lambda _: CODES)
    model = found.model()
    index = SourceIndex(model, found.text)
    first = next(f for f in found.findings if f.diagnostic.location.row == 5)
    harness = ReplayBuilder(index, model, find_site(index, model, first.diagnostic)).build()
    assert "with torch.autocast(__device.type, dtype=torch.float16):" in harness["programs"]["before"]


def verify(tmp_path: Path, source: str) -> dict[int, dict]:
    pytest.importorskip("torch", reason="verify runs its replays in a child process that imports torch")
    (tmp_path / "rope.py").write_text(source)
    result = run_cli("verify", "rope.py", "--output-format", "json", "--device", "cpu", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return {f["line"]: f for f in json.loads(result.stdout)}


def test_the_fix_is_judged_under_the_callers_autocast(tmp_path):
    found = verify(tmp_path, LAYER + COORDS + BF16_CALLER)
    rotary, coords = found[11], found[23]
    for finding in (rotary, coords):
        note = next(n for n in finding["notes"] if n.startswith("dtype:"))
        assert "replayed under `torch.autocast('cpu', dtype=torch.bfloat16)`, before and after" in note
    # float32 positions do not help: the matmul still runs in bfloat16, in every scenario
    assert rotary["verdict"] == "fix-changed-results" and "angles are still" in rotary["detail"]
    assert {s["verdict"] for s in rotary["scenarios"]} == {"fix-changed-results"}
    # the layer call is not compared, and the report says so next to the verdict
    assert any("autocast runs `self.proj(ids[:, None])` (line 24) in bfloat16: the replay compares the positions" in n for n in coords["notes"])


def test_regions_replay_with_their_autocast_and_outer_products_stay_confirmed(tmp_path):
    found = verify(tmp_path, REGIONS)
    assert found[5]["verdict"] == "fix-changed-results", found[5]["detail"]  # not an error on the CPU
    assert any("torch.autocast('cpu', dtype=torch.float16)" in n for n in found[5]["notes"])
    assert found[17]["verdict"] == "confirmed" and not any("autocast" in n for n in found[17]["notes"])
