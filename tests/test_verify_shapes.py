"""The shapes that real code and held-out accumulations broke replays on, each
replayed end to end: values the predicates count (NaN, inf, negatives, the ignore
index, pad ids), 2-D inputs reduced along dim=1, strings, settings read from
`self`, inputs read before the loop, every CUDA spelling, helpers of other
libraries, and branches. One verify run per group, one child per finding."""
import json

import pytest

pytest.importorskip("torch", reason="verify runs torch in its child processes (verify extra)")

from conftest import run_cli  # noqa: E402


def verify_all(tmp_path, source: str, *args: str) -> dict[int, dict]:
    (tmp_path / "shapes.py").write_text(source)
    result = run_cli("verify", "shapes.py", "--output-format", "json", "--device", "cpu", "--world-size", "1", *args, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return {f["line"]: f for f in json.loads(result.stdout)}


VALUES = '''import torch

IGNORE = -100


def nan_entries(acts):
    n = torch.zeros(1)
    for a in acts:
        n += torch.isnan(a).sum()
    return n


def infinities(acts):
    n = torch.zeros(1, dtype=torch.float16)
    for a in acts:
        n += a.isinf().sum()
    return n


def negatives(deltas):
    n = torch.zeros(1, dtype=torch.bfloat16)
    for d in deltas:
        n += (d < 0).sum()
    return n


def ignored(batches):
    n = torch.tensor(0.0)
    for b in batches:
        n += (b["labels"] == IGNORE).sum()
    return n


def self_compare(acts):
    n = torch.zeros(1)
    for a in acts:
        n += (a != a).sum()
    return n
'''


def test_values_the_predicates_count(tmp_path):
    found = verify_all(tmp_path, VALUES)
    assert {line: f["verdict"] for line, f in found.items()} == {7: "confirmed", 14: "confirmed", 21: "confirmed", 28: "confirmed", 35: "confirmed"}
    assert "NaN" in found[7]["inputs"] and "inf" in found[14]["inputs"] and "-1" in found[21]["inputs"]
    assert "-100" in found[28]["inputs"] and "labels" in found[28]["inputs"]


SETTINGS = '''import torch


class Hits:
    def __init__(self, num_classes=4, pad_id=0):
        self.num_classes = num_classes
        self.pad_id = pad_id
        self._device = torch.device("cuda")

    def per_class(self, preds, target):
        hits = torch.zeros(self.num_classes)
        for c in range(self.num_classes):
            hits[c] += ((preds == c) & (target == c)).sum()
        return hits

    def pads(self, seqs):
        pads = torch.zeros(1, device=self._device)
        for s in seqs:
            pads += (s == self.pad_id).sum()
        return pads


def rows_right(batches):
    right = torch.zeros(1, dtype=torch.float16)
    for logits, y in batches:
        right += (logits.argmax(dim=1) == y).sum()
    return right


def before_the_loop(batch, chunks):
    kept = torch.zeros(batch.size(0), device=batch.device)
    for c in chunks:
        kept += (c != 0).sum()
    return kept


def words(docs):
    w = torch.tensor(0.0)
    for doc in docs:
        w += len(doc.split())
    return w
'''


def test_settings_devices_rows_inputs_and_strings(tmp_path):
    found = verify_all(tmp_path, SETTINGS, "--select", "PH001,PH201")
    assert {line: f["verdict"] for line, f in found.items()} == {11: "confirmed", 17: "confirmed", 24: "confirmed", 31: "confirmed", 38: "confirmed"}
    assert "2-D" in found[24]["inputs"]
    assert "words" in found[38]["inputs"] and found[38]["code"] == "PH201"


CUDA = '''import torch
import torchmetrics


def dot_cuda(xs):
    n = torch.zeros(1).cuda()
    for x in xs:
        n += torch.isfinite(x).sum()
    return n


def legacy(params):
    n = torch.cuda.FloatTensor([0.0])
    for p in params:
        n += (p.grad == 0).sum()
    return n


def current(values):
    n = torch.zeros(1, device=torch.cuda.current_device())
    for v in values:
        n += (v > 0).sum()
    return n


def metrics_helper(outputs):
    n = torch.zeros(1)
    for preds, target in outputs:
        target = torchmetrics.utilities.dim_zero_cat(target)
        n += (target >= 0).sum()
    return n
'''


def test_every_cuda_spelling_and_other_libraries(tmp_path):
    found = verify_all(tmp_path, CUDA)
    assert {line: f["verdict"] for line, f in found.items()} == {6: "confirmed", 13: "confirmed", 20: "confirmed", 27: "confirmed"}
    assert any("torchmetrics.utilities.dim_zero_cat" in item for item in found[27]["left_out"])


BRANCHES = '''import torch


def both_arms(batches, count_all):
    n = torch.zeros(1)
    for b in batches:
        if count_all:
            n += b.numel()
        else:
            n += (b > 0).sum()
    return n


def one_arm_undoes(grads, smooth, weights):
    n = torch.zeros(1)
    for g, w in zip(grads, weights):
        n += (g == 0).sum()
        if smooth:
            n = n + w
    return n
'''


def test_branches_are_replayed_per_arm(tmp_path):
    found = verify_all(tmp_path, BRANCHES)
    both, undone = found[5], found[15]
    assert both["verdict"] == "confirmed"
    assert [(s["name"], s["verdict"]) for s in both["scenarios"]] == [
        ("`if count_all` taken", "confirmed"),
        ("`if count_all` not taken", "confirmed"),
    ]
    # only the arm that adds a float (`w`, of unknown type: the replay makes it a
    # float) undoes the fix: that arm decides, and the report names it
    assert undone["verdict"] == "fix-changed-results"
    assert {s["name"]: s["verdict"] for s in undone["scenarios"]} == {
        "`if smooth` taken": "fix-changed-results",
        "`if smooth` not taken": "confirmed",
    }
    assert "if smooth" in undone["detail"]


HOLDERS = '''import torch


def tokens_and_rows(batches):
    n = torch.zeros(1)
    for b in batches:
        n += (b.input_ids != 0).sum()
        n += b.size(0)
    return n


def main_grads(params):
    n = torch.zeros(1)
    for p in params:
        n += (p.main_grad == 0).sum()
    return n
'''


def test_objects_read_through_attributes_forward_tensor_methods(tmp_path):
    # `b.input_ids` is not a tensor attribute: `b` is a holder whose other attributes
    # (`b.size`) forward to a tensor; `p.main_grad` is carried by a tensor
    found = verify_all(tmp_path, HOLDERS)
    assert {line: f["verdict"] for line, f in found.items()} == {5: "confirmed", 13: "confirmed"}
    assert ".input_ids" in found[5]["inputs"] and ".main_grad" in found[13]["inputs"]
