"""Project-wide analysis through the CLI: counts made in one module and accumulated
or all-reduced in another (tests/projects/), partial runs that still read the
imports, the cache across runs, and the index's own rules."""
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from precision_lint.model.dtypes import BFLOAT16, FLOAT32, RUNTIME_FLOAT
from precision_lint.model.values import FLOAT_COUNT_ELSEWHERE, UNKNOWN, Kind, Value
from precision_lint.project.index import NOTHING, ProjectIndex
from precision_lint.project.portable import value_from_data, value_to_data

PROJECTS = Path(__file__).parent / "projects"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Z0-9, ]+)")


def _expected(root: Path, only: list[str] | None = None) -> set[tuple[str, int, str]]:
    expected = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if only is not None and relative not in only:
            continue
        for row, line in enumerate(path.read_text().splitlines(), start=1):
            match = EXPECT.search(line)
            if match:
                expected |= {(relative, row, code.strip()) for code in match.group("codes").split(",")}
    return expected


def _found(root: Path, *args: str) -> set[tuple[str, int, str]]:
    result = run_cli("check", "--exit-zero", "--output-format", "json", *args, cwd=root)
    assert result.returncode == 0, result.stderr
    return {(_relative(d["filename"], root), d["location"]["row"], d["code"]) for d in json.loads(result.stdout)}


def _relative(filename: str, root: Path) -> str:
    path = Path(filename)
    return (path.resolve().relative_to(root.resolve()) if path.is_absolute() else path).as_posix()


@pytest.fixture
def lm(tmp_path) -> Path:
    copy = tmp_path / "lm"
    shutil.copytree(PROJECTS / "lm", copy)
    return copy


def test_whole_package_findings_cross_modules(lm):
    assert _found(lm, "--no-cache", ".") == _expected(lm)


def test_messages_name_where_the_counts_come_from(lm):
    result = run_cli("check", "--no-cache", "--exit-zero", "--output-format", "json", ".", cwd=lm)
    messages = {d["location"]["row"]: d["message"] for d in json.loads(result.stdout) if d["filename"].endswith("eval_loop.py")}
    assert set(messages) == {11, 20}
    assert "counts from `tokens.count_targets()` (lm/metrics/tokens.py:8)" in messages[11]
    assert "counts from `tokens.loss_and_count()` (lm/metrics/tokens.py:13)" in messages[20]


def test_files_handed_over_alone_still_read_their_imports(lm):
    # what pre-commit does: only the changed files, their imports read from disk
    only = ["lm/eval_loop.py", "lm/sync.py"]
    assert _found(lm, "--no-cache", *only) == _expected(lm, only)


def test_a_cached_run_follows_a_change_in_a_helper_module(lm, tmp_path):
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert _found(lm, *cache, ".") == _expected(lm)
    assert _found(lm, *cache, ".") == _expected(lm)  # served from the cache
    helpers = lm / "lm" / "metrics" / "tokens.py"
    # count_targets now returns a mean, not a count: nothing that uses it (loss_and_count
    # included, which returns it) holds counts any more; lm/moe.py's own count stays
    helpers.write_text(helpers.read_text().replace("return (labels != ignore_index).sum()", "return (labels != ignore_index).float().mean()"))
    assert _found(lm, *cache, ".") == {("lm/moe.py", 7, "PH001")}


def test_each_folders_config_selects_the_rules_not_what_the_analysis_sees(lm, tmp_path):
    # lm/ ignores PH003 in sync.py and does not check lm/metrics/, which has a config of its
    # own: the helpers there are still read for what they return, and the messages say so
    (lm / "lm" / "precision-lint.toml").write_text("extend-exclude = ['metrics/']\nper-file-ignores = { 'sync.py' = ['PH003'] }\n")
    (lm / "lm" / "metrics" / "pyproject.toml").write_text("[tool.precision-lint]\nselect = ['PH003']\n")
    expected = _expected(lm) - {("lm/sync.py", 8, "PH003")}
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for args in (["--no-cache"], cache, cache):  # and the same from the cache
        assert _found(lm, *args, ".") == expected
    result = run_cli("check", "--no-cache", "--exit-zero", "--output-format", "json", "lm/sync.py", "lm/eval_loop.py", cwd=lm)
    messages = {(_relative(d["filename"], lm), d["location"]["row"]): d["message"] for d in json.loads(result.stdout)}
    assert sorted(messages) == [("lm/eval_loop.py", 11), ("lm/eval_loop.py", 20)]
    assert "counts from `tokens.count_targets()` (lm/metrics/tokens.py:8)" in messages[("lm/eval_loop.py", 11)]
    # with no config read, everything is checked again
    assert _found(lm, "--no-cache", "--isolated", ".") == _expected(lm)


def test_fix_across_modules_converges(lm):
    result = run_cli("check", "--no-cache", "--fix", ".", cwd=lm)
    assert result.returncode == 1  # the PH003 finding has no fix and remains
    fixed = (lm / "lm" / "eval_loop.py").read_text()
    assert "torch.zeros(1, device=\"cuda\", dtype=torch.int64)" in fixed
    assert "torch.tensor(0, device=\"cuda\", dtype=torch.int64)" in fixed
    compile(fixed, "eval_loop.py", "exec")
    assert _found(lm, "--no-cache", ".") == {("lm/sync.py", 8, "PH003")}


def _module(name: str, functions=None, exports=None, calls=None, opaque=()) -> dict:
    return {
        "module": name, "path": name.replace(".", "/") + ".py", "functions": functions or {}, "classes": {},
        "exports": exports or {}, "calls": calls or {}, "opaque_calls": list(opaque), "evidence": [],
    }  # fmt: skip


def _function(params, returns=None, where=None) -> dict:
    return {"params": params, "positional": len(params), "self": False, "returns": returns, "defaults": [], "where": where}


COUNT = value_to_data(Value.py_int(count=True))


def test_names_resolve_through_re_exports():
    index = ProjectIndex([
        _module("pkg", exports={"count": "pkg.core.count"}),
        _module("pkg.core", functions={"pkg.core.count": _function(["x"], COUNT, "pkg/core.py:3")}),
    ])  # fmt: skip
    assert index.locate("pkg.count")[1] == "pkg.core.count"
    assert index.fingerprint("f:pkg.count") != NOTHING
    assert index.fingerprint("f:pkg.missing") == NOTHING


def test_a_name_in_a_module_read_only_for_its_imports_names_that_module():
    plain = dict(_module("pkg.helpers", exports={"count": "pkg.core.count"}), modeled=False)
    index = ProjectIndex([
        _module("pkg", exports={"forward": "pkg.helpers.forward", "count": "pkg.helpers.count"}),
        plain,
        _module("pkg.core", functions={"pkg.core.count": _function(["x"], COUNT)}),
    ])  # fmt: skip
    assert index.unmodeled_path("pkg.forward") == "pkg/helpers.py"  # defined there, not summarized
    assert index.unmodeled_path("pkg.count") is None  # re-exported from a modeled module
    assert index.unmodeled_path("pkg.core.other") is None  # a modeled module does not define it
    assert index.unmodeled_path("elsewhere.f") is None


def test_parameters_take_what_every_call_site_passes():
    callee = _module("pkg.sync", functions={"pkg.sync.reduce": _function(["n"])})
    caller = _module("pkg.train", calls={"pkg.sync.reduce": [[[COUNT], {}]]})
    assert index_params([callee, caller])["n"].count
    # one more call that passes nothing known: the parameter is no longer a count
    other = _module("pkg.eval", opaque=["pkg.sync.reduce"])
    assert not index_params([callee, caller, other])["n"].count


def index_params(modules) -> dict:
    return ProjectIndex(modules).param_values("pkg.sync.reduce")


def test_two_scripts_of_one_name_resolve_to_neither():
    index = ProjectIndex([
        {**_module("train", functions={"train.f": _function([], COUNT)}), "path": "a/train.py"},
        {**_module("train", functions={"train.f": _function([], COUNT)}), "path": "b/train.py"},
    ])  # fmt: skip
    assert index.locate("train.f") is None


@pytest.mark.parametrize(
    "value",
    [
        Value.py_int(count=True, length=True),
        Value.tensor(FLOAT32, True, count=False, positions=True),
        Value.tuple_of([Value(Kind.PY_FLOAT), Value.tensor(RUNTIME_FLOAT).with_source("the dtype of `h`")]),
        Value.dict_of([("tokens", Value.py_int(count=True))]),
        Value(Kind.INSTANCE, cls="pkg.Metric"),
        Value(Kind.TENSOR, FLOAT32, zero_dim=False, mask=True, buffer=True, per_row=True, flat=True, via="`f()` (a.py:3)"),
        Value(Kind.TENSOR, FLOAT32, count=True, float_count=FLOAT_COUNT_ELSEWHERE),
        Value.tuple_of([UNKNOWN, Value(Kind.DTYPE, BFLOAT16)]),
    ],
)
def test_values_cross_modules_as_data(value):
    data = value_to_data(value)
    assert json.loads(json.dumps(data)) == data
    assert value_from_data(data) == value


def test_a_flag_the_data_does_not_know_is_passed_over():
    assert value_from_data({"k": "tensor", "f": ["count", "a_flag_from_elsewhere"]}) == Value(Kind.TENSOR, count=True)


@pytest.mark.parametrize(
    "module, dots, package, expected",
    [("util", 1, "pkg.sub", "pkg.sub.util"), ("util", 2, "pkg.sub", "pkg.util"), ("", 1, "pkg", "pkg"),
     ("torch.nn", 0, "pkg", "torch.nn"), ("x", 3, "pkg", None)],
)  # fmt: skip
def test_relative_imports_resolve_from_the_package(module, dots, package, expected):
    from precision_lint.model.imports import absolute_module

    assert absolute_module(module, dots, package) == expected


@pytest.mark.parametrize("header", ["import torch\n", ""], ids=["torch-helpers", "plain-helpers"])
def test_a_chain_of_helpers_across_modules_is_followed_to_its_end(tmp_path, header):
    # each module's helper returns the previous module's count: one round per link;
    # helpers without a word of torch are skipped by the prefilter until one is called
    (tmp_path / "c0.py").write_text("import torch\n\ndef count0(mask):\n    return (mask != 0).sum()\n")
    for number in range(1, 6):
        (tmp_path / f"c{number}.py").write_text(
            f"{header}from c{number - 1} import count{number - 1}\n\ndef count{number}(mask):\n    return count{number - 1}(mask)\n"
        )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom c5 import count5\n\ndef run(masks):\n    total = torch.zeros(1)\n"
        "    for mask in masks:\n        total += count5(mask)\n    return total\n"
    )
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert _found(tmp_path, *cache, ".") == {("train.py", 5, "PH001")}
    # the first run reached the fixed point: a run from its cache says the same
    assert _found(tmp_path, *cache, ".") == {("train.py", 5, "PH001")}


def test_the_editors_workspace_models_a_plain_helper_module_it_reads(tmp_path):
    from precision_lint.project.workspace import WorkspaceProject

    (tmp_path / "helpers.py").write_text("def n_items(batch):\n    return len(batch)\n")  # no torch: skipped by the prefilter
    train = tmp_path / "train.py"
    train.write_text(
        "import torch\nfrom helpers import n_items\n\ndef run(batches):\n    total = torch.zeros(1)\n"
        "    for b in batches:\n        total += n_items(b)\n    return total\n"
    )
    workspace = WorkspaceProject(lambda path: path.read_text() if path.exists() else None)
    found = workspace.check(train.read_text(), str(train), frozenset({"PH201"}))
    assert [(d.code, d.location.row) for d in found] == [("PH201", 5)]
    assert "counts from `helpers.n_items()`" in found[0].message


def _package_counting_for_a_script(root: Path, package_name: str, init_text: str) -> None:
    """`package_name/core.py` returns a count; its `__init__.py` is `init_text`; train.py
    imports the count from the package and adds it into a float32 total (line 5)."""
    package = root / package_name
    package.mkdir()
    (package / "__init__.py").write_text(init_text)
    (package / "core.py").write_text("import torch\n\ndef count_valid(labels):\n    return (labels != -100).sum()\n")
    (root / "train.py").write_text(
        f"import torch\nfrom {package_name} import count_valid\n\ndef run(batches):\n    total = torch.zeros(1)\n"
        "    for labels in batches:\n        total += count_valid(labels)\n    return total\n"
    )


def test_a_project_whose_name_starts_with_torch_is_still_the_projects_own(tmp_path):
    # `torchkit` is not torch: its re-exports and imports are followed like any package's
    _package_counting_for_a_script(tmp_path, "torchkit", "from .core import count_valid\n")
    assert _found(tmp_path, "--no-cache", ".") == {("train.py", 5, "PH001")}


def test_star_imports_re_export_and_connect_modules(tmp_path):
    # `pkg/__init__.py` star-imports its modules (timm's layout): names resolve through
    # it, and a script importing the package runs alongside each module
    _package_counting_for_a_script(tmp_path, "pkg", "from .core import *\n")
    assert _found(tmp_path, "--no-cache", ".") == {("train.py", 5, "PH001")}
    index = ProjectIndex([
        _module("pkg", exports={}) | {"star_imports": ["pkg.core"]},
        _module("pkg.core", functions={"pkg.core.count_valid": _function(["labels"], COUNT)}),
        _module("train", exports={"pkg": "pkg"}),
    ])  # fmt: skip
    assert index.locate("pkg.count_valid")[1] == "pkg.core.count_valid"
    assert index.locate("pkg.missing") is None
    assert index.imports.run_together("pkg/core.py", "train.py")


def test_packages_that_star_import_one_another_are_searched_once_each(monkeypatch):
    # every module star-imports every other (fairseq's packages do, in part): a search
    # that re-entered each module by every path took minutes; each is read once a name
    names = [f"pkg.m{i}" for i in range(12)]
    modules = [_module(name) | {"star_imports": [other for other in names if other != name]} for name in names]
    modules[-1]["functions"] = {"pkg.m11.count_valid": _function(["labels"], COUNT)}
    index = ProjectIndex(modules)
    reads = []
    find = index._find_owner
    monkeypatch.setattr(index, "_find_owner", lambda *args, **kwargs: reads.append(args[0]) or find(*args, **kwargs))
    assert index.locate("pkg.m0.count_valid")[1] == "pkg.m11.count_valid"  # the nearest that defines it
    assert index.locate("pkg.m0.missing") is None
    assert len(reads) <= 2 * (len(names) + 1)


def _namespace_project(root: Path) -> Path:
    """Megatron-LM's layout: `megatron/` has no `__init__.py` (a namespace package),
    `megatron/core/` is the top package, and code imports `megatron.core.counting`."""
    core = root / "Megatron-LM" / "megatron" / "core"
    core.mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "counting.py").write_text("import torch\n\ndef count_valid(labels):\n    return (labels != -100).sum()\n")
    loop = "def run(batches):\n    total = torch.zeros(1)\n    for labels in batches:\n        total += {call}(labels)\n    return total\n"
    (core / "train.py").write_text(
        "import torch\nfrom megatron.core.counting import count_valid\n\n" + loop.format(call="count_valid")
    )
    (root / "Megatron-LM" / "pretrain.py").write_text(
        "import torch\nimport megatron.core.counting\n\n" + loop.format(call="megatron.core.counting.count_valid")
    )
    return root / "Megatron-LM"


def test_a_namespace_packages_absolute_imports_resolve(tmp_path):
    project = _namespace_project(tmp_path)
    expected = {("megatron/core/train.py", 5, "PH001"), ("pretrain.py", 5, "PH001")}
    assert _found(project, "--no-cache", ".") == expected
    # handed over alone (pre-commit), each file still reads the module it imports
    assert _found(project, "--no-cache", "megatron/core/train.py") == {("megatron/core/train.py", 5, "PH001")}
    assert _found(project, "--no-cache", "pretrain.py") == {("pretrain.py", 5, "PH001")}


def test_namespace_prefixes_are_the_importable_folders_above_a_top_package(tmp_path):
    from precision_lint.project.modules import namespace_prefixes, namespace_spellings

    root = tmp_path / "Megatron-LM" / "code" / "megatron"
    assert namespace_prefixes(str(root)) == ("megatron", "code.megatron")  # `Megatron-LM` is no identifier
    assert namespace_prefixes(str(tmp_path / "a" / "class" / "b")) == ("b",)  # nor is a keyword
    path = str(root / "core" / "utils.py")
    assert namespace_spellings("core.utils", path) == ["megatron.core.utils", "code.megatron.core.utils"]
    assert namespace_spellings("core", str(root / "core" / "__init__.py"))[0] == "megatron.core"


def test_the_index_answers_a_name_spelled_through_its_namespace_package():
    index = ProjectIndex([
        {**_module("core.counting", functions={"core.counting.count": _function(["x"], COUNT)}), "path": "megatron/core/counting.py"},
        {**_module("core", exports={"count": "megatron.core.counting.count"}), "path": "megatron/core/__init__.py"},
        {**_module("train", exports={"count": "megatron.core.count"}), "path": "train.py"},
    ])  # fmt: skip
    assert index.locate("megatron.core.counting.count")[1] == "core.counting.count"
    assert index.locate("megatron.core.count")[1] == "core.counting.count"  # a re-export spelled so too
    assert index.locate("core.counting.count")[1] == "core.counting.count"
    assert index.locate("megatron.core.counting.other") is None
    assert index.locate("other.core.counting.count") is None  # no folder of that name above it
    assert index.module_named("megatron.core.counting") == "core.counting"
    assert index.imports.run_together("megatron/core/counting.py", "train.py")  # train.py imports it


def test_a_module_of_the_spelled_name_comes_before_the_namespace_reading():
    # a real module `megatron.core.counting` (its own file) is the one a name means
    real = {**_module("megatron.core.counting", functions={"megatron.core.counting.count": _function(["x"])}), "path": "x/megatron/core/counting.py"}
    spelled = {**_module("core.counting", functions={"core.counting.count": _function(["x"], COUNT)}), "path": "megatron/core/counting.py"}
    index = ProjectIndex([spelled, real])
    assert index.locate("megatron.core.counting.count")[1] == "megatron.core.counting.count"


def test_a_module_other_files_import_is_modeled_in_the_first_round(tmp_path):
    # a helper without torch (the prefilter would only read its imports) that the run's
    # files import: its summary is whole at once, so they are answered in the first round
    from precision_lint.registry import all_rules
    from precision_lint.runner import Job, run_job

    codes = frozenset(rule.code for rule in all_rules())
    helpers = tmp_path / "helpers.py"
    helpers.write_text("def n_items(batch):\n    return len(batch)\n")
    alone, imported = run_job(Job(str(helpers), codes)), run_job(Job(str(helpers), codes, imported=True))
    assert alone.summary["modeled"] is False and alone.summary["functions"] == {}
    assert imported.summary.get("modeled", True) and "helpers.n_items" in imported.summary["functions"]
    assert imported.diagnostics == alone.diagnostics == []
    broken = tmp_path / "broken.py"
    broken.write_text("def n_items(batch:\n    return len(batch)\n")  # the prefilter reports nothing here
    assert run_job(Job(str(broken), codes, imported=True)).diagnostics == []
