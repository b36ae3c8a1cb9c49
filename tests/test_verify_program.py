"""How a replay is built from the source (no torch, no child process): statements
in order and inside their loops, inputs bound before the creation, one add per
source statement, branches as scenarios, every CUDA spelling mapped to the target
device, the allow-list applied to what comes from the source."""
from dataclasses import replace

import libcst as cst
import pytest

from precision_lint.engine import check_source
from precision_lint.model.semantic import build_model
from precision_lint.registry import all_rules
from precision_lint.verify.program import ReplayBuilder
from precision_lint.verify.sites import NoReplay, find_site
from precision_lint.verify.source_view import SourceIndex
from precision_lint.verify.usage import UsageAnalysis

CODES = frozenset(rule.code for rule in all_rules())


def build(source: str, code: str = "PH001") -> dict:
    (diagnostic,) = [d for d in check_source(source, "train.py", CODES) if d.code == code and d.fix is not None]
    model = build_model(cst.parse_module(source))
    index = SourceIndex(model, source)
    return ReplayBuilder(index, model, find_site(index, model, diagnostic)).build()


def build_with_fix_of(source: str, clean: str, code: str = "PH001") -> dict:
    """A replay of `source` given the fix the linter offers for `clean` (the same
    source without the statement that makes it refuse one)."""
    (diagnostic,) = [d for d in check_source(source, "train.py", CODES) if d.code == code]
    (offered,) = [d for d in check_source(clean, "train.py", CODES) if d.code == code and d.fix is not None]
    model = build_model(cst.parse_module(source))
    index = SourceIndex(model, source)
    return ReplayBuilder(index, model, find_site(index, model, replace(diagnostic, fix=offered.fix))).build()


def lines(program: str) -> list[str]:
    return [line.strip() for line in program.splitlines()]


def test_statements_after_the_add_stay_inside_the_loop_in_order():
    # the linter refuses the fix here (the rebinding makes int64 float again); the
    # replay of the fix it would offer keeps the rebinding where it is
    harness = build_with_fix_of(
        "import torch\ndef f(grads):\n    acc = torch.zeros(1)\n    for g in grads:\n"
        "        acc += (g == 0).sum()\n        acc = acc * 0.5 + acc * 0.5\n    print(acc.item())\n",
        "import torch\ndef f(grads):\n    acc = torch.zeros(1)\n    for g in grads:\n"
        "        acc += (g == 0).sum()\n    print(acc.item())\n",
    )
    program = harness["programs"]["after"].splitlines()
    loop = next(i for i, line in enumerate(program) if "for g in" in line)
    add = next(i for i, line in enumerate(program) if line.strip() == "acc += __a0")
    rebind = next(i for i, line in enumerate(program) if line.strip() == "acc = acc * 0.5 + acc * 0.5")
    after_loop = next(i for i, line in enumerate(program) if "print(acc.item())" in line)
    indent = len(program[add]) - len(program[add].lstrip())
    assert loop < add < rebind < after_loop
    assert len(program[rebind]) - len(program[rebind].lstrip()) == indent  # still in the loop body
    assert "torch.zeros(1, dtype=torch.int64)" in harness["programs"]["after"]
    # the rebinding is mirrored on the shadow (in float64), not skipped
    assert any(line.startswith("__s0 = __s0 * 0.5 + __s0 * 0.5") for line in lines(harness["programs"]["after"]))


def test_inputs_are_bound_before_the_creation_reads_them():
    harness = build(
        "import torch\ndef f(batch, chunks):\n    kept = torch.zeros(batch.size(0), device=batch.device)\n"
        "    for c in chunks:\n        kept += (c != 0).sum()\n    print(kept)\n"
    )
    program = lines(harness["programs"]["before"])
    assert program.index("batch = __h.input('batch')") < program.index("kept = torch.zeros(batch.size(0), device=__device)")
    # `batch` is read through tensor methods only: not a size, not a holder
    assert harness["inputs"]["batch"]["roles"] == []


def test_one_add_per_source_statement():
    # the model records `t += ...` on a Python 0.0 twice: once while `t` is a float (the
    # first pass of the loop), once as the float32 tensor it becomes; the replay adds once
    model = build_model(cst.parse_module(source := "def f(bs):\n    t = 0.0\n    for b in bs:\n        t += (b == 0).sum()\n    print(t)\n"))
    assert len(model.accumulators[0].adds) == 2
    program = lines(build(source)["programs"]["before"])
    assert program.count("__a0 = (b == 0).sum()") == 1 and program.count("t += __a0") == 1
    assert not any(line.startswith("__a1") for line in program)


def test_only_bare_names_are_sizes_and_range_variables_stay_ints():
    harness = build(
        "import torch\ndef f(preds, target, num_classes):\n    hits = torch.zeros(num_classes)\n"
        "    for c in range(num_classes):\n        hits[c] += ((preds == c) & (target == c)).sum()\n    print(hits)\n"
    )
    assert harness["inputs"]["num_classes"]["roles"] == ["size"]
    assert "size" not in harness["inputs"]["preds"]["roles"]
    assert "for c in __h.bounded(range(num_classes)):" in harness["programs"]["before"]


def test_settings_from_init_defaults_and_values_the_code_compares_with():
    harness = build(
        "import torch\nclass T:\n    def __init__(self, pad_id=3):\n        self.pad_id = pad_id\n"
        "    def run(self, seqs):\n        pads = torch.zeros(1)\n        for s in seqs:\n"
        "            pads += (s == self.pad_id).sum()\n        print(pads)\n"
    )
    assert "pad_id = 3" in lines(harness["programs"]["before"])
    assert 3 in harness["inputs"]["seqs"]["elem"]["specials"]


@pytest.mark.parametrize(
    "spelling, mapped",
    [
        ("torch.zeros(1).cuda()", "torch.zeros(1).to(__device)"),
        ("torch.cuda.FloatTensor([0.0])", "__h.legacy('FloatTensor')([0.0])"),
        ("torch.zeros(1, device=torch.cuda.current_device())", "torch.zeros(1, device=__device)"),
        ("torch.zeros(1, device='cuda:1')", "torch.zeros(1, device=__device)"),
        ("torch.zeros(1).to('cuda')", "torch.zeros(1).to(__device)"),
    ],
)
def test_every_cuda_spelling_is_the_target_device(spelling, mapped):
    harness = build(f"import torch\ndef f(xs):\n    n = {spelling}\n    for x in xs:\n        n += torch.isinf(x).sum()\n    print(n)\n")
    assert f"n = {mapped}" in lines(harness["programs"]["before"])


def test_private_device_attribute_is_a_device_and_legacy_fix_keeps_the_mapping():
    harness = build(
        "import torch\nclass M:\n    def __init__(self):\n        self._device = torch.device('cuda')\n"
        "    def f(self, xs):\n        n = torch.cuda.FloatTensor([0])\n        m = torch.zeros(1, device=self._device)\n"
        "        for x in xs:\n            n += (x == 0).sum()\n        print(n, m)\n"
    )
    assert "n = __h.legacy('LongTensor')([0])" in lines(harness["programs"]["after"])
    assert "self._device = __h.device()" in lines(harness["programs"]["before"])


def test_a_branch_that_adds_is_one_scenario_per_arm():
    harness = build(
        "import torch\ndef f(xs, every):\n    n = torch.zeros(1)\n    for x in xs:\n        if every:\n"
        "            n += x.numel()\n        else:\n            n += (x > 0).sum()\n    print(n)\n"
    )
    assert [s["name"] for s in harness["scenarios"]] == ["`if every` taken", "`if every` not taken"]
    assert "if __h.arm(0, 0):" in harness["programs"]["before"]


def test_a_filter_is_not_replayed_and_the_report_says_so():
    harness = build(
        "import torch\ndef f(params):\n    n = torch.zeros(1)\n    for p in params:\n        if p.grad is None:\n            continue\n"
        "        n += (p.grad == 0).sum()\n    print(n)\n"
    )
    assert any("filter `if p.grad is None:`" in item for item in harness["left_out"])


def test_torch_names_are_tested_exactly():
    from precision_lint.verify.names import is_torch_cuda_name, is_torch_name

    assert is_torch_name("torch") and is_torch_name("torch.zeros") and is_torch_cuda_name("torch.cuda.FloatTensor")
    assert not is_torch_name("torchmetrics.utilities.select_topk") and not is_torch_name("torchvision.ops.nms")
    assert not is_torch_cuda_name("torch.cudart")


def test_helpers_of_other_libraries_are_left_out_not_taken_for_torch():
    harness = build(
        "import torch\nimport torchmetrics\ndef f(outs):\n    n = torch.zeros(1)\n    for p, t in outs:\n"
        "        t = torchmetrics.utilities.to_onehot(t, 3)\n        n += (t >= 0).sum()\n    print(n)\n"
    )
    assert "t = __h.input('t')" in lines(harness["programs"]["before"])
    assert any("torchmetrics.utilities.to_onehot" in item for item in harness["left_out"])


@pytest.mark.parametrize(
    "escape",
    [
        "print.__self__.exec('x = 1')",
        "getattr(print, '__self__')",
        "open('pwned', 'w')",
        "__import__('os')",
        "torch.save(x, 'pwned.pt')",
        "eval('1')",
        "'{0.__class__}'.format(x)",
        "x.numpy().tofile('pwned')",
        "torch.hub.load('a', 'b')",
    ],
)
def test_replay_code_that_reaches_outside_is_refused(escape):
    source = f"import torch\ndef f(xs):\n    n = torch.zeros(1)\n    for x in xs:\n        n += (x == 0).sum() + 0 * len(str({escape}))\n    print(n)\n"
    with pytest.raises(NoReplay, match="refused"):
        build(source)


def test_a_refused_statement_the_site_does_not_need_is_left_out():
    harness = build(
        "import torch\nimport os\ndef f(xs):\n    n = torch.zeros(1)\n    for x in xs:\n        n += (x == 0).sum()\n"
        "    os.system('touch pwned')\n    print(n)\n"
    )
    assert "os.system" not in harness["programs"]["before"]


def test_value_sites_carry_their_exact_version():
    harness = build("import torch\ndef f(p, y):\n    return torch.sum(p == y, dtype=torch.float16)\n", code="PH002")
    assert "__h.value(0, torch.sum(p == y, dtype=torch.float16), torch.sum(p == y, dtype=torch.float64))" in harness["programs"]["before"]
    assert "__h.value(0, torch.sum(p == y), torch.sum(p == y, dtype=torch.float64))" in harness["programs"]["after"]


def test_positions_and_the_angles_they_make():
    harness = build(
        "import torch\ndef f(n, inv_freq):\n    t = torch.arange(n, dtype=torch.bfloat16)\n    return torch.outer(t, inv_freq)\n", code="PH004"
    )
    program = harness["programs"]["before"]
    assert "t = __h.value(0, torch.arange(n, dtype=torch.bfloat16), torch.arange(n, dtype=torch.float64))" in program
    assert "__h.angle(0, torch.outer(t, inv_freq), torch.outer(__h.exact_of(0), __h.f64(inv_freq)))" in program
    assert harness["inputs"]["n"]["roles"] == ["positions", "size"]


def test_an_accumulator_created_in_one_arm_is_replayed_in_that_arm():
    harness = build(
        "import torch\nclass Hist:\n    def __init__(self, n, on):\n        if on:\n            self._hits = torch.zeros(n)\n"
        "        else:\n            self._hits = None\n    def update(self, x):\n        self._hits += torch.bincount(x, minlength=4)\n"
    )
    # the `else:` arm leaves nothing to count: one scenario, the creating arm, and the report says so
    assert [s["arms"] for s in harness["scenarios"]] == [{"0": 0}]
    assert any("created only in the first arm" in item for item in harness["left_out"])


def test_integer_data_by_name_helper_results_as_indices_and_layer_sizes():
    ids = build("import torch\ndef f(batches):\n    total = torch.zeros(())\n    for ids in batches:\n        total += torch.ones_like(ids).masked_fill(ids == 0, 0).sum()\n    return total\n")
    assert "integer" in ids["inputs"]["batches"]["elem"]["roles"]  # token ids are int64: ones_like counts
    routed = build(
        "import torch\nimport torch.nn as nn\n\ndef _expert_ids(logits, k):\n    return logits.topk(k, dim=-1).indices\n\n"
        "class Router(nn.Module):\n    def __init__(self, hidden_size, num_experts):\n        super().__init__()\n"
        "        self.num_experts = num_experts\n        self.gate = nn.Linear(hidden_size, num_experts)\n"
        "    def forward(self, probs):\n        load = torch.zeros(self.num_experts)\n"
        "        load += torch.bincount(_expert_ids(probs, 2).flatten(), minlength=self.num_experts)\n        return load\n"
    )
    # the helper's result, flattened and counted by bincount, is an index inside the buffer
    assert routed["opaque"] == [{"roles": ["index"], "index_range": 4}]
    # a layer's arguments are sizes (`nn.Linear(hidden_size, num_experts)` runs in __init__)
    source = "import torch.nn as nn\ndef make(hidden_size, num_experts):\n    return nn.Linear(hidden_size, num_experts, bias=False)\n"
    model = build_model(cst.parse_module(source))
    analysis = UsageAnalysis(model.imports)
    analysis.analyse(model.module, SourceIndex(model, source).parents)
    assert "size" in analysis.spec("hidden_size")["roles"] and "size" in analysis.spec("num_experts")["roles"]


def test_numpy_totals_are_replayed_in_numpy_on_numpy_arrays():
    pytest.importorskip("numpy", reason="which inputs are arrays is asked of NumPy")
    scalar = build("import numpy as np\ntotal = np.int32(0)\nfor shard in shards:\n    total += len(shard)\nprint(total)\n", code="PH005")
    assert scalar["library"] == "numpy" and (scalar["dtype"], scalar["limit"]) == ("int32", 2**31 - 1)
    before, after = lines(scalar["programs"]["before"]), lines(scalar["programs"]["after"])
    assert "import numpy as np" in before and before.index("total = np.int32(0)") < before.index("total = __h.start(0, total, None)")
    assert "total = np.int64(0)" in after and "__h.box(0, None).v += __h.exact(__a0)" in after
    assert scalar["inputs"]["shards"] == {"roles": [], "elem": {"roles": ["numpy"]}}  # arrays by default
    histogram = build(
        "import numpy as np\ndef f(shards, n):\n    counts = np.zeros(n, dtype=np.int32)\n    for ids in shards:\n"
        "        counts += np.bincount(ids, minlength=n)\n    return counts\n",
        code="PH005",
    )
    assert "__a0 = np.bincount(ids, minlength=n)" in lines(histogram["programs"]["before"])  # NumPy runs: not left out
    assert histogram["inputs"]["n"] == {"roles": ["size"]}
    assert histogram["inputs"]["shards"]["elem"] == {"roles": ["index", "integer", "numpy"], "index_range": 4}


def test_data_a_torch_replay_hands_to_numpy_is_an_array_and_the_rest_stays_tensors():
    pytest.importorskip("numpy", reason="which inputs are arrays is asked of NumPy")
    harness = build(
        "import numpy as np\nimport torch\ndef f(xs, ys):\n    n = torch.zeros(1)\n    for x, y in zip(xs, ys):\n"
        "        n += np.count_nonzero(x) + (y == 0).sum()\n    print(n)\n"
    )
    assert harness["library"] == "torch"
    assert "numpy" in harness["inputs"]["xs"]["elem"]["roles"] and "numpy" not in harness["inputs"]["ys"]["elem"]["roles"]


def test_numpy_totals_are_skipped_where_numpy_is_not_installed(monkeypatch):
    from precision_lint.verify import sites

    found = sites.importlib.util.find_spec
    monkeypatch.setattr(sites.importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else found(name, *a))
    with pytest.raises(NoReplay, match="NumPy is not installed"):
        build("import numpy as np\ntotal = np.int32(0)\nfor shard in shards:\n    total += len(shard)\nprint(total)\n", code="PH005")
