"""The exact shadow starts where the accumulator does: at the start offset plus what
its creation made (`torch.ones`, `torch.full((k,), 5)`, `torch.tensor([3, 0, 7])`,
`np.ones`, `np.int32(5)`), element by element, for torch and NumPy totals; the offset
is lowered by the largest element, so an int32 start never wraps before the first
add. Before, a total that did not start at zero was `fix-changed-results`, off by
its own starting value."""
import json

import pytest

torch = pytest.importorskip("torch", reason="the recorder and the replays run torch")

from conftest import run_cli

from precision_lint.verify.hooks import LIMITS, Recorder
from precision_lint.verify.starts import STRESS, start_offset

INT32 = LIMITS[torch.int32]
FLOAT32 = LIMITS[torch.float32]


def replay(recorder: Recorder, accumulator, counts):
    """Adds `counts` to the accumulator and to its shadow, as a replay's add does."""
    for count in counts:
        accumulator += count
        recorder.box(0, None).v += recorder.exact(count)
        recorder.trace(0, accumulator, None, 1, "add")
    return recorder.summary()


@pytest.mark.parametrize(
    "make, initial",
    [
        (lambda: torch.ones(1, dtype=torch.int32), [1]),
        (lambda: torch.full((1,), 5), [5]),
        (lambda: torch.tensor([3, 0, 7], dtype=torch.int32), [3, 0, 7]),
        (lambda: torch.ones(2), [1, 1]),
        (lambda: torch.full((1,), 5.0), [5]),
    ],
)
@pytest.mark.parametrize("run", ["zero", "below"])
def test_the_shadow_starts_at_the_offset_plus_what_the_creation_made(make, initial, run):
    recorder = Recorder("cpu", run)
    accumulator = recorder.start(0, make(), None)
    offset = recorder.offset
    assert recorder.box(0, None).v.tolist() == [offset + value for value in initial]
    recorder.trace(0, accumulator, None, 1, "start")
    assert not recorder.lost  # the start itself is exact: no count is lost before an add
    summary = replay(recorder, accumulator, [0, 0])
    assert summary["final"][0] == sum(offset + value for value in initial)
    assert not summary["lost"]
    if run == "below" and recorder.limit is not None:  # int64 has no limit to start below
        # the largest element starts where a zero start would: exactly representable
        integer = not make().is_floating_point()
        assert offset + max(initial) == start_offset("below", recorder.limit, integer)


def test_an_int32_total_that_starts_at_five_wraps_on_the_adds_not_at_the_start():
    recorder = Recorder("cpu", "below")
    total = recorder.start(0, torch.full((1,), 5, dtype=torch.int32), None)
    assert recorder.offset == INT32 - 2 - 5 and total.item() == INT32 - 2  # not wrapped yet
    summary = replay(recorder, total, [1, 1, 1])
    assert summary["lost"] and summary["final"] == (INT32 + 1, -INT32 - 1)  # wrapped by the third add
    assert summary["start"] == INT32 - 2  # what the report calls "started at"
    fixed = Recorder("cpu", "below", recorder.offset)  # the fixed code gets the same offset
    fixed_total = fixed.start(0, torch.full((1,), 5, dtype=torch.int64), None)
    assert not replay(fixed, fixed_total, [1, 1, 1])["lost"]


def test_a_python_number_start_counts_too():
    recorder = Recorder("cpu", "zero")
    total = recorder.start(0, 3, None)
    assert total == 3 and int(recorder.box(0, None).v) == 3


def test_numpy_totals_start_from_their_own_value():
    np = pytest.importorskip("numpy", reason="NumPy totals are replayed with NumPy")
    for make, initial in ((lambda: np.ones(2, dtype=np.int32), [1, 1]), (lambda: np.int32(5), [5])):
        recorder = Recorder("cpu", "below")
        total = recorder.start(0, make(), None)
        shadow = recorder.box(0, None).v
        assert shadow.dtype == np.int64 and np.atleast_1d(shadow).tolist() == [recorder.offset + v for v in initial]
        assert int(np.max(total)) == INT32 - 2  # the largest element starts two below 2^31
        with np.errstate(over="ignore"):
            summary = replay(recorder, total, [1, 1, 1])  # a Python int: NumPy keeps int32
        assert summary["lost"]  # int32 wraps within three adds of 1


def test_a_stress_pass_starts_integers_below_their_limit_and_floats_high():
    assert start_offset(STRESS, INT32, True) == INT32 - 2
    assert start_offset(STRESS, FLOAT32, False) == 8 * FLOAT32 - 64 == start_offset("high", FLOAT32, False)
    assert start_offset("high", INT32, True) == 0  # replays drive integers from `below`


STARTS = """import numpy as np
import torch


def labels_seen(batches):
    seen = torch.ones(1, dtype=torch.int32)
    for batch in batches:
        seen += (batch != -100).sum()
    return seen.item()


def zeros_seen(acts):
    found = torch.full((1,), 5.0)
    for a in acts:
        found += (a == 0).sum()
    return found.item()


def pads_seen(batches):
    pads = torch.tensor([3.0])
    for batch in batches:
        pads += (batch == 0).sum()
    return pads.item()


def tokens_seen(shards):
    total = np.ones(1, dtype=np.int32)
    for shard in shards:
        total += np.count_nonzero(shard)
    return int(total[0])


def per_class(batches):
    counts = torch.tensor([3, 0, 7], dtype=torch.int32)
    for labels in batches:
        counts += torch.bincount(labels, minlength=3).int()
    return counts
"""


def test_totals_that_do_not_start_at_zero_are_confirmed_with_an_exact_fix(tmp_path):
    pytest.importorskip("numpy", reason="one of the totals is kept in NumPy")
    (tmp_path / "starts.py").write_text(STARTS)
    result = run_cli("verify", "starts.py", "--output-format", "json", "--device", "cpu", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    found = {f["line"]: f for f in json.loads(result.stdout)}
    assert sorted(found) == [6, 13, 20, 27, 34]
    for finding in found.values():
        assert finding["verdict"] == "confirmed", finding["detail"]
        assert finding["abs_error_after"] == 0 and finding["after"] == finding["exact"] != finding["before"]
    # started where a zero start would be: two below 2^31, 8 x 2^24 - 64
    assert "(started at 2,147,483,645)" in found[6]["detail"]
    assert "(started at 134,217,664)" in found[13]["detail"]
