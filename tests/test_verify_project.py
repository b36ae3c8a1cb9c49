"""verify on what the project-wide model finds: counts that come from other modules,
the model's floating dtype (decided at run time, replayed as bfloat16 and said so),
a dtype the project's evidence decides (a whole-model cast in another module, a
bfloat16 default dtype), step counters and dict items. Each replay runs torch in a
child process."""
import json
import shutil

import pytest

pytest.importorskip("torch", reason="verify runs torch in its child processes (verify extra)")

from conftest import run_cli  # noqa: E402


def verify_json(cwd, *paths: str) -> dict[tuple[str, int], dict]:
    result = run_cli("verify", *paths, "--output-format", "json", "--device", "cpu", "--world-size", "1", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return {(f["path"].replace("\\", "/"), f["line"]): f for f in json.loads(result.stdout)}


@pytest.fixture()
def lm(repo_root, tmp_path):
    shutil.copytree(repo_root / "tests" / "projects" / "lm", tmp_path / "lm-project")
    return tmp_path / "lm-project"


def test_findings_across_modules_and_the_projects_cast(lm):
    found = verify_json(lm, "lm")
    assert set(found) == {("lm/eval_loop.py", 11), ("lm/eval_loop.py", 20), ("lm/moe.py", 7)}
    assert all(f["verdict"] == "confirmed" for f in found.values()), {k: f["detail"] for k, f in found.items()}
    # the counts come from lm/metrics/tokens.py: the helper is left out, its result a count
    tokens = found[("lm/eval_loop.py", 20)]
    assert any("tk.loss_and_count" in item for item in tokens["left_out"])
    assert "`n`: a count" in tokens["inputs"]
    assert tokens["exact"] > 2**24 and tokens["after"] == tokens["exact"] != tokens["before"]
    # the dtype of `hidden_states`: bfloat16, as launch.py casts the model
    moe = found[("lm/moe.py", 7)]
    assert moe["dtype_before"] == "bfloat16" and moe["limit"] == 256
    assert any("replayed as bfloat16" in n and "lm/launch.py:6" in n for n in moe["notes"])
    assert moe["max_seen"] > 256 and moe["after"] == moe["exact"] != moe["before"]


def test_the_models_floating_dtype_alone_is_replayed_as_bfloat16(lm):
    # without launch.py nothing says how the model runs: the narrowest common dtype
    (moe,) = verify_json(lm, "lm/moe.py").values()
    assert moe["verdict"] == "confirmed" and moe["dtype_before"] == "bfloat16"
    assert any("decided at run time: replayed as bfloat16, the narrowest common training dtype" in n for n in moe["notes"])


def test_step_counters_dict_items_and_a_bfloat16_default_dtype(repo_root, tmp_path):
    shutil.copy(repo_root / "tests" / "fixtures" / "ph001" / "router_statistics.py", tmp_path / "router.py")
    found = verify_json(tmp_path, "router.py")
    verdicts = {line: f["verdict"] for (_, line), f in found.items()}
    assert verdicts == {25: "confirmed", 26: "confirmed", 30: "confirmed"}, {k: f["detail"] for k, f in found.items()}
    steps = found[("router.py", 25)]  # `self._updates += 1` in the default dtype, set to bfloat16
    assert steps["dtype_before"] == "bfloat16" and "stops" not in steps["detail"]
    assert any("default dtype" in n and "set_default_dtype" in n for n in steps["notes"])
    assert steps["exact"] - steps["before"] > 0 and steps["after"] == steps["exact"]
    dropped = found[("router.py", 26)]  # `self._stats["dropped"]`, an item of a dict
    assert dropped["function"] == "TopKRouter.forward" and "`positive`: a count" in dropped["inputs"]
    load = found[("router.py", 30)]  # `hidden_states.new_zeros(...)`: the model's dtype
    assert any("the model's floating dtype" in n for n in load["notes"])
    assert any("_expert_ids" in item for item in load["left_out"])
