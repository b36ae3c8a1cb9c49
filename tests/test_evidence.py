"""What a project shows about the precision its model runs in (model/evidence.py),
and how it settles the findings that depend on it (conditions.py)."""
import json
import shutil
from pathlib import Path

import libcst as cst
import pytest

from conftest import run_cli
from precision_lint.conditions import CAST, DEFAULT, RUNTIME, needs, resolve
from precision_lint.diagnostics import Diagnostic, Location, Severity
from precision_lint.engine import check_module, line_of
from precision_lint.model.evidence import AUTOCAST, DEFAULT_DOUBLE, DEFAULT_HALF, HALF, collect_evidence
from precision_lint.model.semantic import build_model
from precision_lint.model.summaries import Evidence, ProjectFacts

PROJECTS = Path(__file__).parent / "projects"


def kinds(source: str) -> list[str]:
    return [seen.kind for seen in collect_evidence(build_model(cst.parse_module(source)))]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import torch\nmodel = build()\nmodel.bfloat16()\n", [HALF]),
        ("import torch\nnet.to('cuda').half()\n", [HALF]),
        ("import torch\nself_model = make()\nself_model.to(torch.float16)\n", [HALF]),
        ("from megatron.core.transformer.module import Float16Module\nm = Float16Module(config, module)\n", [HALF]),
        ("import torch\nfrom torch.distributed.fsdp import MixedPrecision\np = MixedPrecision(param_dtype=torch.bfloat16)\n", [HALF]),
        ("import torch\nm = AutoModel.from_pretrained(name, torch_dtype=torch.bfloat16)\n", [HALF]),
        ("import torch\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    pass\n", [AUTOCAST]),
        ("import torch\nscaler = torch.cuda.amp.GradScaler()\n", [AUTOCAST]),
        ("args = TrainingArguments(output_dir='o', bf16=True)\n", [AUTOCAST]),
        ("trainer = Trainer(precision='bf16-mixed')\nfabric = Fabric(precision='16-true')\n", [AUTOCAST, HALF]),
        ("import torch\ntorch.set_default_dtype(torch.bfloat16)\n", [DEFAULT_HALF]),
        ("import torch\ntorch.set_default_dtype(torch.float64)\n", [DEFAULT_DOUBLE]),
    ],
)
def test_evidence_of_how_the_model_runs(source, expected):
    assert kinds(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nlogits = f()\nlogits.half()\n",  # a tensor, not the model
        "import torch\nwith torch.autocast('cuda', enabled=False):\n    pass\n",
        "import torch\nwith torch.autocast('cuda', dtype=torch.float32):\n    pass\n",
        "args = TrainingArguments(output_dir='o', bf16=False)\n",
        "import torch\ntorch.set_default_dtype(torch.float32)\n",
    ],
)
def test_no_evidence(source):
    assert kinds(source) == []


@pytest.mark.parametrize("quick", [True, False])
def test_evidence_in_parentheses_of_its_own_is_on_the_line_of_its_call(quick):
    source = (
        "import torch\nopt = build(x)\nmodel = (\n"
        "    AutoModel.from_pretrained(name, torch_dtype=torch.bfloat16)\n)\n"
    )
    facts = check_module(source, "a.py", frozenset({"PH001"}), try_quick=quick).facts
    assert [(seen.kind, seen.where) for seen in facts.evidence] == [(HALF, "a.py:4")]


def test_the_line_of_code_is_where_its_first_line_is_found():
    source = "a = f(x)\nb = g(\n    y)\n"
    assert line_of(source, "g(\n    y)") == 2
    assert line_of(source, "(\n(\n    g(y))\n)") == 1  # not found: the first line
    assert line_of(source, "(\n    y)") == 3


def diagnostic(*conditions: str, severity=Severity.WARNING) -> Diagnostic:
    return Diagnostic("PH001", "float-count-accumulator", "counts in float", severity, "a.py", Location(1, 1), Location(1, 2), conditions=conditions)


HALF_SEEN = Evidence(HALF, "model.bfloat16()", "train.py:4")


def test_runtime_findings_are_warnings_until_the_project_runs_in_half_precision():
    (plain,) = resolve([diagnostic(RUNTIME)], ProjectFacts())
    assert plain.severity is Severity.WARNING and plain.conditions == ()
    (raised,) = resolve([diagnostic(RUNTIME)], ProjectFacts([HALF_SEEN]))
    assert raised.severity is Severity.ERROR and "`model.bfloat16()` at train.py:4" in raised.message


def test_needs_keeps_a_finding_only_with_that_evidence():
    assert resolve([diagnostic(needs(AUTOCAST))], ProjectFacts([HALF_SEEN])) == []
    autocast = Evidence(AUTOCAST, "torch.autocast('cuda', dtype=torch.bfloat16)", "step.py:9")
    (kept,) = resolve([diagnostic(needs(AUTOCAST))], ProjectFacts([autocast]))
    assert kept.severity is Severity.ERROR and "step.py:9" in kept.message


def test_default_dtype_findings_follow_the_default():
    double = Evidence(DEFAULT_DOUBLE, "torch.set_default_dtype(torch.float64)", "sim.py:2")
    assert resolve([diagnostic(DEFAULT, severity=Severity.ERROR)], ProjectFacts([double])) == []
    half = Evidence(DEFAULT_HALF, "torch.set_default_dtype(torch.bfloat16)", "run.py:1")
    (kept,) = resolve([diagnostic(DEFAULT, severity=Severity.ERROR)], ProjectFacts([half]))
    assert "run.py:1" in kept.message


@pytest.mark.parametrize("where", ["tests/test_metric.py:633", "test/unit/sim.py:2", "pkg/test_sim.py:2", "sim_test.py:1", "conftest.py:4"])
def test_a_tests_float64_default_does_not_remove_a_finding(where):
    # the test runs itself in float64; the library's users run the float32 default
    double = Evidence(DEFAULT_DOUBLE, "torch.set_default_dtype(torch.float64)", where)
    (kept,) = resolve([diagnostic(DEFAULT)], ProjectFacts([double]))
    assert kept.severity is Severity.WARNING


def test_a_float64_default_does_not_remove_a_finding_where_a_half_default_is_also_set():
    double = Evidence(DEFAULT_DOUBLE, "torch.set_default_dtype(torch.float64)", "sim.py:2")
    half = Evidence(DEFAULT_HALF, "torch.set_default_dtype(torch.float16)", "serve.py:3")
    (kept,) = resolve([diagnostic(DEFAULT)], ProjectFacts([double, half]))
    assert kept.severity is Severity.ERROR and "serve.py:3" in kept.message


def test_a_cast_is_named_on_a_float32_buffer_finding():
    (named,) = resolve([diagnostic(CAST, severity=Severity.ERROR)], ProjectFacts([HALF_SEEN]))
    assert "casts it to half precision" in named.message


def test_evidence_in_one_module_settles_a_finding_in_another(tmp_path):
    copy = tmp_path / "lm"
    shutil.copytree(PROJECTS / "lm", copy)
    result = run_cli("check", "--no-cache", "--exit-zero", "--output-format", "json", ".", cwd=copy)
    (moe,) = [d for d in json.loads(result.stdout) if d["filename"].endswith("moe.py")]
    assert moe["code"] == "PH001" and moe["severity"] == "error"
    assert "the dtype of `hidden_states`" in moe["message"] and "lm/launch.py:6" in moe["message"]
    # without the cast, the width is the run's to choose: a warning
    (copy / "lm" / "launch.py").write_text("def build(model_factory, device):\n    return model_factory().to(device)\n")
    result = run_cli("check", "--no-cache", "--exit-zero", "--output-format", "json", ".", cwd=copy)
    (moe,) = [d for d in json.loads(result.stdout) if d["filename"].endswith("moe.py")]
    assert moe["severity"] == "warning" and "launch.py" not in moe["message"]


def _write(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


ROUTER = (
    "import torch\n"
    "def expert_load(hidden, ids, n):\n"
    "    load = torch.zeros(n, dtype=hidden.dtype)\n"
    "    for chunk in ids:\n"
    "        load += torch.bincount(chunk, minlength=n)\n"
    "    return load\n"
)


def _router_severity(root) -> tuple[str, str]:
    result = run_cli("check", "--no-cache", "--exit-zero", "--output-format", "json", ".", cwd=root)
    (found,) = [d for d in json.loads(result.stdout) if d["filename"].endswith("router.py")]
    return found["severity"], found["message"]


def test_evidence_reaches_the_code_that_runs_alongside_it(tmp_path):
    # the script imports the router and the helper that casts: they run together
    _write(tmp_path, {
        "net/__init__.py": "",
        "net/router.py": ROUTER,
        "net/precision.py": "def to_bf16(model):\n    return model.bfloat16()\n",
        "train.py": "from net.router import expert_load\nfrom net.precision import to_bf16\n",
    })  # fmt: skip
    severity, message = _router_severity(tmp_path)
    assert severity == "error" and "net/precision.py:2" in message


def test_evidence_in_an_unrelated_script_or_test_stays_there(tmp_path):
    # a benchmark's cast and a test's autocast never run with the router's code
    _write(tmp_path, {
        "net/__init__.py": "",
        "net/router.py": ROUTER,
        "benchmarks/bench_half.py": "def run(model):\n    return model.half()\n",
        "tests/test_amp.py": "import torch\ndef test_amp(model, x):\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        model(x)\n",
    })  # fmt: skip
    severity, message = _router_severity(tmp_path)
    assert severity == "warning" and "bench_half" not in message
    # once the test imports the router, its autocast and the router run together;
    # a bfloat16 autocast region is not a whole-model cast, so the width stays the run's
    (tmp_path / "tests/test_amp.py").write_text("import torch\nfrom net.router import expert_load\n" + (tmp_path / "tests/test_amp.py").read_text().split("\n", 1)[1])
    (tmp_path / "benchmarks/bench_half.py").write_text("from net import router\ndef run(model):\n    return model.half()\n")
    severity, message = _router_severity(tmp_path)
    assert severity == "error" and "benchmarks/bench_half.py:3" in message


def test_evidence_reaches_the_modules_of_its_own_package_folder(tmp_path):
    # the package's training step is handed the model: nothing imports both, one folder holds them
    _write(tmp_path, {
        "net/__init__.py": "",
        "net/router.py": ROUTER,
        "net/step.py": "def prepare(model):\n    return model.bfloat16()\n",
    })  # fmt: skip
    severity, message = _router_severity(tmp_path)
    assert severity == "error" and "net/step.py:2" in message
