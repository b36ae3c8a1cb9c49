"""A replay for every rule that has a fix: PH005 (int32 wraps at 2^31, int64 is
exact), PH006 (scatter_add_, index_add_, index_put_(accumulate=True),
bincount(weights=ones)), PH002 (a float sum of a mask against the integer sum),
PH004 (bf16 positions against exact integers, and the angles they make against
float64), and `check --fix --verify` gating each of them."""
import json

import pytest

pytest.importorskip("torch", reason="verify runs torch in its child processes (verify extra)")

from conftest import run_cli  # noqa: E402


def verify_all(tmp_path, source: str, *args: str) -> dict[int, dict]:
    (tmp_path / "rules.py").write_text(source)
    result = run_cli("verify", "rules.py", "--output-format", "json", "--device", "cpu", "--world-size", "1", *args, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return {f["line"]: f for f in json.loads(result.stdout)}


INT32 = '''import torch


def tokens(micro_batches):
    n = torch.zeros([], dtype=torch.int32)
    for mb in micro_batches:
        n += (mb["labels"] != -100).sum()
    print(n.item())


def elements(tensors):
    total = torch.cuda.IntTensor([0])
    for t in tensors:
        total.add_(t.numel())
    print(int(total))
'''


def test_int32_counters_wrap_and_int64_is_exact(tmp_path):
    found = verify_all(tmp_path, INT32)
    for line in (5, 12):
        finding = found[line]
        assert finding["code"] == "PH005" and finding["verdict"] == "confirmed"
        assert finding["exact"] > 2**31 - 1 and finding["after"] == finding["exact"]
        assert finding["before"] < 0  # wrapped around


HISTOGRAMS = '''import torch


def expert_load(routing, num_experts=8):
    load = torch.zeros(num_experts)
    for idx in routing:
        load.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.float))
    return load


def bucket_hits(ids_per_step):
    hits = torch.zeros(6, dtype=torch.bfloat16)
    for ids in ids_per_step:
        hits.index_add_(0, ids, torch.ones(ids.numel(), dtype=torch.bfloat16))
    return hits


def put_hits(indices):
    c = torch.zeros(3, dtype=torch.float16)
    for idx in indices:
        c.index_put_((idx,), torch.ones(idx.numel(), dtype=torch.float16), accumulate=True)
    return c


def class_histogram(labels):
    return torch.bincount(labels, weights=torch.ones(labels.numel()), minlength=4)


def masked_histogram(labels, valid):
    return torch.bincount(labels, weights=(valid > 0).float(), minlength=3)
'''


def test_histograms_of_ones(tmp_path):
    found = verify_all(tmp_path, HISTOGRAMS)
    assert {line: (f["code"], f["verdict"]) for line, f in found.items()} == {
        7: ("PH006", "confirmed"),
        14: ("PH006", "confirmed"),
        21: ("PH006", "confirmed"),
        26: ("PH006", "confirmed"),
        # dropping a 0/1 mask as weights counts the masked-out labels too
        30: ("PH006", "fix-changed-results"),
    }
    assert found[7]["after"] == found[7]["exact"] != found[7]["before"]


SUMS_AND_POSITIONS = '''import torch


def correct_in_half(pred, target):
    return torch.sum(pred == target, dtype=torch.float16)


def correct_total(batches):
    correct = torch.zeros(1, dtype=torch.float64)
    for p, y in batches:
        correct += (p == y).float().sum()
    return correct


def long_positions(seq_len):
    return torch.arange(seq_len, dtype=torch.bfloat16)


def short_angles(n, inv_freq):
    t = torch.arange(min(n, 200)).to(torch.bfloat16)
    return torch.outer(t, inv_freq.to(t.dtype))


class Rotary(torch.nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, seq_len):
        t = torch.arange(seq_len, device=self.inv_freq.device).type_as(self.inv_freq)
        return torch.outer(t, self.inv_freq)
'''


def test_mask_sums_positions_and_angles(tmp_path):
    found = verify_all(tmp_path, SUMS_AND_POSITIONS)
    half_sum, float_sum, positions, angles, buffer = found[5], found[11], found[16], found[20], found[30]
    assert (half_sum["code"], half_sum["verdict"]) == ("PH002", "confirmed")
    assert half_sum["exact"] > 2048 and half_sum["after"] == half_sum["exact"]
    # one float32 sum of a mask past 2^24: the single-shot rounding of the output
    assert (float_sum["code"], float_sum["verdict"]) == ("PH002", "confirmed")
    assert (positions["code"], positions["verdict"]) == ("PH004", "confirmed")
    assert "positions are off" in positions["detail"]
    # 200 positions are exact in bfloat16, but the angles made from them are not
    assert (angles["code"], angles["verdict"]) == ("PH004", "confirmed")
    assert "angles" in angles["detail"] and "rad" in angles["detail"]
    # a buffer's dtype: confirmed once the module is cast, not as built
    assert buffer["verdict"] == "confirmed"
    scenarios = {s["name"]: s["verdict"] for s in buffer["scenarios"]}
    assert scenarios["module cast to bfloat16"] == "confirmed"
    assert scenarios["module as built"] == "not-reproduced"


def test_check_fix_verify_gates_every_rule(tmp_path):
    good = "import torch\ndef f(labels):\n    return torch.bincount(labels, weights=torch.ones(labels.numel()), minlength=4)\n"
    bad = "import torch\ndef g(labels, valid):\n    return torch.bincount(labels, weights=(valid > 0).float(), minlength=3)\n"
    positions = "import torch\ndef h(n):\n    return torch.arange(n, dtype=torch.bfloat16)\n"
    (tmp_path / "good.py").write_text(good)
    (tmp_path / "bad.py").write_text(bad)
    (tmp_path / "positions.py").write_text(positions)
    gated = run_cli("check", "--fix", "--unsafe-fixes", "--verify", "--device", "cpu", "--no-cache", ".", cwd=tmp_path)
    assert "minlength=4)" in (tmp_path / "good.py").read_text() and "weights" not in (tmp_path / "good.py").read_text()
    assert (tmp_path / "bad.py").read_text() == bad  # dropping the mask changes the counts: not written
    assert "dtype=torch.float32" in (tmp_path / "positions.py").read_text()
    assert "bad.py:3: fix-changed-results" in gated.stderr
