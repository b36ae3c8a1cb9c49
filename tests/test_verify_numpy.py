"""NumPy totals (PH005's `np.int32(0)`, `np.zeros(k, dtype=np.int32)`) replayed as
NumPy runs them: started two below 2^31 next to an exact int64 shadow, so int32's
wrap shows in a few adds and the int64 fix is exact; counts that never fire are
not-driven; a look-alike that NumPy itself widens to int64 stays exact; the inputs
the code hands to NumPy are arrays; and the allow-list lets NumPy in without what
reaches files or raw memory."""
import json
import subprocess
import sys

import pytest

from conftest import run_cli
from precision_lint.verify import sandbox

INT32_LIMIT = 2**31 - 1


def verify(tmp_path, source: str) -> dict[int, dict]:
    pytest.importorskip("torch", reason="verify runs its replays in a child process that imports torch")
    pytest.importorskip("numpy", reason="NumPy totals are replayed with NumPy")
    (tmp_path / "totals.py").write_text(source)
    result = run_cli("verify", "totals.py", "--output-format", "json", "--device", "cpu", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return {f["line"]: f for f in json.loads(result.stdout)}


def test_numpy_int32_totals_wrap_and_int64_is_exact(repo_root, tmp_path):
    found = verify(tmp_path, (repo_root / "tests" / "fixtures" / "ph005" / "numpy_shard_totals.py").read_text())
    assert sorted(found) == [7, 14]  # `safe_total` (np.int64) is not a finding
    for finding in found.values():
        assert (finding["code"], finding["verdict"], finding["mode"]) == ("PH005", "confirmed", "replay")
        assert (finding["dtype_before"], finding["dtype_after"]) == ("int32", "int64")
        assert finding["before"] < 0 < INT32_LIMIT < finding["exact"] == finding["after"]  # wrapped; int64 exact
        assert finding["abs_error_after"] == 0 and finding["limit"] == INT32_LIMIT
        # driven from the start offset, not by two billion adds
        assert finding["exact"] < 4 * (INT32_LIMIT + 10**4)
        assert "NumPy arrays" in finding["inputs"]
    assert found[7]["function"] == "total_tokens" and "int32 was off by up to" in found[7]["detail"]
    assert "int64 index NumPy arrays" in found[14]["inputs"]  # what `np.bincount` is handed


def test_numpy_counts_that_never_fire_are_not_driven(tmp_path):
    source = (
        "import numpy as np\n\n\ndef big_values(xs):\n    total = np.int32(0)\n    for x in xs:\n"
        "        total += np.count_nonzero(np.abs(x) > 5)\n    return int(total)\n"
    )
    (finding,) = verify(tmp_path, source).values()
    assert finding["verdict"] == "not-driven" and "0" in finding["detail"]
    assert finding["before"] == finding["after"] == finding["exact"] <= INT32_LIMIT


def test_a_numpy_look_alike_that_numpy_widens_stays_exact(tmp_path):
    # `counts + np.bincount(...)` is int32 + int64: NumPy makes a new int64 array (`+=`
    # would cast back into int32 and wrap), so past 2^31 the original is exact too
    source = (
        "import numpy as np\n\n\ndef histogram(shards, n):\n    counts = np.zeros(n, dtype=np.int32)\n    for ids in shards:\n"
        "        counts = counts + np.bincount(ids, minlength=n)\n    return counts\n"
    )
    (finding,) = verify(tmp_path, source).values()
    assert finding["verdict"] == "not-reproduced"
    assert finding["before"] == finding["after"] == finding["exact"]
    assert finding["max_seen"] > finding["limit"] == INT32_LIMIT


def test_numpy_file_io_stays_blocked_in_a_replay(tmp_path):
    written, read = tmp_path / "pwned.npy", tmp_path / "shard.npy"
    source = (
        "import numpy as np\n\n\ndef saved(shards):\n    total = np.int32(0)\n    for shard in shards:\n"
        f"        total += len(shard)\n    np.save({str(written)!r}, total)\n    return int(total)\n\n\n"
        f"def loaded(paths):\n    total = np.int32(0)\n    for path in paths:\n        total += len(np.load({str(read)!r}))\n"
        "    return int(total)\n"
    )
    found = verify(tmp_path, source)
    # the save only reads the total afterwards: left out, and the replay runs without it
    assert found[5]["verdict"] == "confirmed"
    assert any("np.save" in item and "refused" in item for item in found[5]["left_out"])
    # the load is in the add itself: no replay
    assert found[13]["verdict"] == "skipped" and "refused" in found[13]["detail"] and ".load" in found[13]["detail"]
    assert not written.exists()


NUMPY_ESCAPES = [
    "np.save('pwned', x)",
    "np.load('pwned.npy')",
    "np.fromfile('pwned')",
    "x.tofile('pwned')",
    "x.dump('pwned')",
    "np.memmap('pwned', mode='w+', shape=(1,))",
    "np.lib.format.open_memmap('pwned', mode='w+', shape=(1,))",
    "np.loadtxt('pwned')",
    "np.savetxt('pwned', x)",
    "np.savez('pwned', x)",
    "np.savez_compressed('pwned', x)",
    "np.genfromtxt('pwned')",
    "np.fromregex('pwned', 'x', int)",
    "np.ctypeslib.as_array(x)",
    "x.ctypes.data",
    "np.testing.assert_equal(x, x)",
    "np.test()",
    "np.f2py.compile('x')",
    "np._core.multiarray",
    "getattr(np, 'load')",
]


@pytest.mark.parametrize("escape", NUMPY_ESCAPES)
def test_allow_list_refuses_numpy_file_io_and_raw_memory(escape):
    assert sandbox.problems(f"def __replay(__h):\n    import numpy as np\n    y = {escape}\n")


@pytest.mark.parametrize("statement", ["import numpy.lib", "from numpy.lib import format", "from numpy import load", "from numpy import memmap", "import numpyro"])
def test_allow_list_refuses_numpy_imports_that_reach_files(statement):
    assert sandbox.problems(f"def __replay(__h):\n    {statement}\n")


def test_allow_list_accepts_a_plain_numpy_replay():
    program = (
        "def __replay(__h):\n    import torch\n    import numpy as np\n    from numpy import int32\n"
        "    def __m0():\n        shards = __h.input('shards')\n        counts = np.zeros(4, dtype=int32)\n"
        "        counts = __h.start(0, counts, None)\n        for ids in __h.bounded(shards):\n"
        "            __a0 = np.bincount(ids, minlength=4)\n            counts += __a0\n"
        "            __h.box(0, None).v += __h.exact(__a0)\n            __h.trace(0, counts, None, 5, 'add')\n"
        "    __h.run([], [__m0], [], None)\n"
    )
    assert sandbox.problems(program) == []


def test_the_child_refuses_numpy_file_io_too(tmp_path):
    pytest.importorskip("torch", reason="the child process imports torch")
    target = tmp_path / "pwned.npy"
    # a job that never went through the parent's builder
    program = f"def __replay(__h):\n    import numpy as np\n    np.save({str(target)!r}, np.zeros(1))\n"
    job = {"kind": "accumulator", "programs": {"before": program, "after": program}, "scenarios": [{"name": "", "arms": {}}], "inputs": {}, "device": "cpu"}
    completed = subprocess.run([sys.executable, "-m", "precision_lint.verify.child"], input=json.dumps(job), capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "refused" in json.loads(completed.stdout)["harness_error"]
    assert not target.exists()


def test_a_numpy_float32_total_loses_counts_past_2_24_and_int64_keeps_them():
    pytest.importorskip("torch", reason="the recorder runs in the replay's child process, with torch")
    np = pytest.importorskip("numpy", reason="NumPy totals are replayed with NumPy")
    from precision_lint.verify.hooks import Recorder

    summaries = []
    offset = None
    for dtype in (np.float32, np.int64):  # as written, then as fixed: the same offset
        recorder = Recorder("cpu", "below", offset)
        total = recorder.start(0, np.zeros(1, dtype=dtype), None)
        for count in (1, 3, 5, 7):
            total += count
            recorder.box(0, None).v += recorder.exact(np.int64(count))
            recorder.trace(0, total, None, 1, "add")
        offset = recorder.offset
        summaries.append(recorder.summary())
    before, after = summaries
    assert before["offset"] == 2**24 - 8 and before["start_dtype"] == "float32"
    assert before["driven"] and before["lost"]
    assert after["start_dtype"] == "int64" and not after["lost"] and after["final"] == (2**24 + 8, 2**24 + 8)


def test_a_numpy_count_added_to_a_tensor_keeps_the_shadow_torch():
    torch = pytest.importorskip("torch", reason="the recorder runs in the replay's child process, with torch")
    np = pytest.importorskip("numpy", reason="NumPy counts")
    from precision_lint.verify.hooks import Recorder

    recorder = Recorder("cpu", "zero")
    recorder.start(0, torch.zeros(2, dtype=torch.int32), None)
    assert recorder.exact(np.int64(3)) == 3
    assert torch.equal(recorder.exact(np.array([1, 2], dtype=np.int32)), torch.tensor([1, 2]))
