"""Fixed code computes exact counts past 2^24; the original does not (CPU, real torch)."""
import pytest

torch = pytest.importorskip("torch", reason="running the fixed code needs torch (test extra)")

from precision_lint.fixer import fix_source  # noqa: E402

FLOAT32_LIMIT = 2**24


def _run(source: str, function: str, *args):
    namespace: dict = {}
    exec(compile(source.replace('device="cuda"', 'device="cpu"'), "<example>", "exec"), namespace)
    return namespace[function](*args)


def _gradients():
    """One big gradient of 2^24 zeros, then 999 small ones with one zero each: the
    float32 total stops at 2^24 because each +1 is below half its spacing there."""
    big = torch.nn.Parameter(torch.zeros(FLOAT32_LIMIT))
    big.grad = torch.zeros(FLOAT32_LIMIT)
    params = [big]
    for _ in range(999):
        small = torch.nn.Parameter(torch.ones(3))
        small.grad = torch.tensor([0.0, 1.0, 2.0])
        params.append(small)
    return params, FLOAT32_LIMIT + 999


def test_megatron_shaped_example_is_exact_only_after_the_fix(repo_root):
    source = (repo_root / "examples" / "count_zeros.py").read_text()
    outcome = fix_source(source, "count_zeros.py", frozenset({"PH001"}))
    assert "dtype=torch.int64" in outcome.source and len(outcome.fixed) == 1
    params, exact = _gradients()
    before = _run(source, "count_zero_gradients", params)
    after = _run(outcome.source, "count_zero_gradients", params)
    assert before != exact and before == FLOAT32_LIMIT  # the float32 total stalled
    assert after == exact and isinstance(after, int)


def test_python_float_start_becomes_exact(repo_root):
    source = (
        "def count(masks):\n"
        "    total = 0.0\n"
        "    for m in masks:\n"
        "        total += (m == 0).sum()\n"
        "    return total\n"
    )
    outcome = fix_source(source, "count.py", frozenset({"PH001"}), unsafe=True)  # returned: unsafe
    assert "total = 0\n" in outcome.source
    masks = [torch.zeros(FLOAT32_LIMIT, dtype=torch.uint8)] + [torch.tensor([0, 1], dtype=torch.uint8)] * 7
    exact = FLOAT32_LIMIT + 7
    assert int(_run(source, "count", masks)) != exact
    assert int(_run(outcome.source, "count", masks)) == exact


def test_bfloat16_counter_past_256():
    source = (
        "import torch\n"
        "def seen(batches):\n"
        "    n = torch.zeros(1, dtype=torch.bfloat16)\n"
        "    for b in batches:\n"
        "        n += b.size(0)\n"
        "    return int(n.item())\n"
    )
    outcome = fix_source(source, "seen.py", frozenset({"PH001"}))
    assert "dtype=torch.int64" in outcome.source
    batches = [torch.zeros(3, 2)] * 300
    assert _run(source, "seen", batches) != 900
    assert _run(outcome.source, "seen", batches) == 900
