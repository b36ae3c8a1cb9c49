"""Runs one child command in a process group of its own, with a time and a memory
limit, and kills the whole group (every rank it spawned) when it runs too long or
when it is done. Nothing here imports torch."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from dataclasses import dataclass


@dataclass
class Outcome:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    pgid: int
    seconds: float

    def last_lines(self, count: int = 3) -> str:
        return " / ".join((self.stderr or "").strip().splitlines()[-count:])


def memory_limit(gigabytes: float | None):
    """A preexec function that caps the address space (None: no cap). CUDA reserves
    far more address space than it uses, so runs on a GPU pass None."""
    if gigabytes is None:
        return None

    def apply() -> None:
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_isolated(
    argv: list[str],
    stdin: str,
    timeout: float,
    memory_gb: float | None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Outcome:
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own session and process group: pgid == pid
        preexec_fn=memory_limit(memory_gb),
        env=env,
        cwd=cwd,
    )
    pgid = process.pid
    timed_out = False
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(pgid)
        stdout, stderr = process.communicate()
    finally:
        # ranks or workers the child left behind die with it
        kill_group(pgid)
    return Outcome(process.returncode, stdout or "", stderr or "", timed_out, pgid, time.perf_counter() - started)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still there (for tests and reports)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
