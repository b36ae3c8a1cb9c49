"""Replays are untrusted code: the allow-list refuses what reaches outside the
computation (in the parent, and again in the child), file writes are blocked while
a replay runs, each replay has a process group of its own that is killed whole
(every rank) on timeout, and `--call` children get the same memory limit."""
import json
import subprocess
import sys
import time

import pytest

from conftest import run_cli
from precision_lint.verify import sandbox
from precision_lint.verify.isolation import group_alive, run_isolated

ESCAPES = [
    "print.__self__",
    "print.__self__.exec('import os')",
    "getattr(print, '__self__')",
    "(1).__class__.__bases__[0].__subclasses__()",
    "exec('1')",
    "eval('1')",
    "compile('1', 'f', 'eval')",
    "open('pwned', 'w')",
    "__import__('os')",
    "os.system('true')",
    "subprocess.run(['true'])",
    "torch.save(x, 'pwned')",
    "torch.load('pwned')",
    "torch.from_file('pwned')",
    "x.numpy().tofile('pwned')",
    "'{0.__class__}'.format(x)",
    "torch.hub.load('a', 'b')",
    "torch.utils.cpp_extension.load_inline('a', 'b')",
    "torch.ops.load_library('x.so')",
    "torch._C._get_tracing_state()",
    "torch.distributed.init_process_group('gloo')",
    "x.untyped_storage()._share_filename_cpu_()",
    "(lambda: 0).__globals__",
    "globals()",
    "vars()",
    "type(x)",
]


@pytest.mark.parametrize("escape", ESCAPES)
def test_allow_list_refuses_each_escape(escape):
    assert sandbox.problems(f"def __replay(__h):\n    y = {escape}\n")


@pytest.mark.parametrize("statement", ["import os", "import subprocess as s", "from os import system", "from . import x", "import torch.utils.data"])
def test_allow_list_refuses_imports_but_torch(statement):
    assert sandbox.problems(f"def __replay(__h):\n    {statement}\n")


def test_allow_list_accepts_a_plain_replay():
    program = (
        "def __replay(__h):\n    import torch\n    import torch.distributed as dist\n    __device = __h.device()\n"
        "    def __m0():\n        xs = __h.input('xs')\n        n = torch.zeros(1, device=__device)\n"
        "        for x in __h.bounded(xs):\n            __a0 = (x == 0).sum()\n            n += __a0\n"
        "            __h.box(0, None).v += __h.exact(__a0)\n            __h.trace(0, n, None, 5, 'add')\n"
        "        dist.all_reduce(n)\n        print([len(str(v)) for v in {'a': 1}.values()], getattr(n, 'shape'))\n"
        "    __h.run([], [__m0], [], None)\n"
    )
    assert sandbox.problems(program) == []


def test_user_source_may_not_name_the_generated_hooks():
    assert sandbox.problems("def __replay(__h):\n    __h._boxes\n")
    assert sandbox.problems("x = __h", generated=False)


def test_a_replay_that_reaches_builtins_is_refused_end_to_end(tmp_path):
    source = (
        "import torch\ndef f(xs):\n    n = torch.zeros(1)\n    for x in xs:\n"
        "        n += (x == 0).sum() + 0 * len(print.__self__.open('pwned', 'w').name)\n    print(n)\n"
    )
    (tmp_path / "train.py").write_text(source)
    result = run_cli("verify", "train.py", "--output-format", "json", "--device", "cpu", cwd=tmp_path)
    (finding,) = json.loads(result.stdout)
    assert finding["verdict"] == "skipped" and "refused" in finding["detail"] and "__self__" in finding["detail"]
    assert not (tmp_path / "pwned").exists()


def test_the_child_checks_the_program_again(tmp_path):
    # a job that never went through the parent's builder
    program = "def __replay(__h):\n    open('pwned', 'w').write('x')\n"
    job = {"kind": "accumulator", "programs": {"before": program, "after": program}, "scenarios": [{"name": "", "arms": {}}], "inputs": {}, "device": "cpu"}
    completed = subprocess.run([sys.executable, "-m", "precision_lint.verify.child"], input=json.dumps(job), capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "refused" in json.loads(completed.stdout)["harness_error"]
    assert not (tmp_path / "pwned").exists()


def test_file_writes_are_blocked_while_a_replay_runs(tmp_path):
    pytest.importorskip("torch", reason="the replay runs torch in a child process (verify extra)")
    # behind the allow-list, a file-size limit of 0 while a replay runs: a replay
    # function that writes anyway (built here in Python, past the allow-list) fails
    script = (
        "import json\nfrom precision_lint.verify.child import _execute\n"
        "class Hooks:\n    post_error = None\n    def summary(self):\n        return {}\n"
        "print(json.dumps(_execute(lambda h: (f := open('pwned', 'w')).write('x' * 100) and f.flush(), Hooks())))\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    record = json.loads(completed.stdout)
    assert "File too large" in record["error"]["error"]
    assert (tmp_path / "pwned").read_text() == ""


def test_a_child_that_dies_is_reported_by_exit_status():
    outcome = run_isolated([sys.executable, "-c", "import os; os._exit(9)"], "", 30, 2.0)
    assert outcome.returncode == 9 and not outcome.timed_out


def test_timeout_kills_the_whole_process_group():
    # the child starts a grandchild that would outlive it, then hangs
    script = "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\ntime.sleep(600)\n"
    started = time.perf_counter()
    outcome = run_isolated([sys.executable, "-c", script], "", 3, None)
    assert outcome.timed_out and time.perf_counter() - started < 30
    deadline = time.time() + 10
    while group_alive(outcome.pgid) and time.time() < deadline:
        time.sleep(0.2)
    assert not group_alive(outcome.pgid)


def test_a_two_rank_replay_past_its_timeout_is_stopped_with_every_rank(tmp_path):
    pytest.importorskip("torch", reason="the replay runs torch in a child process (verify extra)")
    source = (
        "import torch\nimport torch.distributed as dist\ndef f(xs):\n    n = torch.zeros(1)\n    for x in xs:\n"
        "        k = sum(range(10**15))\n        n += (x == k).sum()\n    dist.all_reduce(n)\n    print(n)\n"
    )
    (tmp_path / "train.py").write_text(source)
    result = run_cli("verify", "train.py", "--output-format", "json", "--device", "cpu", "--world-size", "2", "--timeout", "20", cwd=tmp_path)
    (finding,) = json.loads(result.stdout)
    assert finding["verdict"] == "error" and "--timeout" in finding["detail"] and "every rank" in finding["detail"]
    pgid = int(finding["detail"].split("process group ")[1].split()[0].strip(",)"))
    deadline = time.time() + 10
    while group_alive(pgid) and time.time() < deadline:
        time.sleep(0.2)
    assert not group_alive(pgid)


def test_call_children_get_the_memory_limit(tmp_path):
    pytest.importorskip("torch", reason="the replay runs torch in a child process (verify extra)")
    (tmp_path / "greedy.py").write_text(
        "import torch\ndef run(xs):\n    big = torch.ones(2**31)\n    n = torch.zeros(1)\n    for x in xs:\n"
        "        n += (x == 0).sum()\n    return n + big.sum() * 0\n"
    )
    (tmp_path / "inputs.py").write_text("import torch\ndef make(device):\n    return ([torch.zeros(3)],), {}\n")
    result = run_cli(
        "verify", "--call", "greedy:run", "--inputs", "inputs:make", "--memory-limit", "4",
        "--device", "cpu", "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    (finding,) = json.loads(result.stdout)
    assert finding["verdict"] == "not-reached"  # the allocation failed before the site ran
    assert any("raised" in note and ("memory" in note.lower() or "alloc" in note.lower()) for note in finding["notes"])
