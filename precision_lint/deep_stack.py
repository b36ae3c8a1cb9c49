"""Runs a function on a thread with a large stack and a raised recursion limit.

The semantic model and libcst's metadata and code generation recurse once per level of
an expression, and Python accepts expressions about 3,000 levels deep (a sum of 2,990
terms, 2,989 chained calls or attributes): under the default limit of 1,000 frames a
sum of 500 terms already raised RecursionError. 100,000 frames on a 512 MiB stack (only
what is touched is ever allocated) leaves a margin of ten over what Python accepts.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

STACK_SIZE = 512 * 1024 * 1024
RECURSION_LIMIT = 100_000

T = TypeVar("T")
_lock = threading.Lock()


def call_with_deep_stack(function: Callable[..., T], *args) -> T:
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # handed to the caller's thread
            outcome["error"] = error

    with _lock:  # stack_size and the recursion limit are process-wide settings
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, RECURSION_LIMIT))
        thread = _start(target)
        if thread is None:  # no thread at all could be had: run here, as deep as it goes
            sys.setrecursionlimit(previous_limit)
            return function(*args)
        try:
            thread.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _start(target: Callable[[], None]) -> threading.Thread | None:
    """A started thread with the largest stack the system grants (a strict memory
    overcommit policy may refuse 512 MiB)."""
    for size in (STACK_SIZE, STACK_SIZE // 8, 0):
        try:
            previous = threading.stack_size(size)
        except (ValueError, RuntimeError):
            continue
        try:
            thread = threading.Thread(target=target, name="precision-lint-check", daemon=True)
            thread.start()
            return thread
        except RuntimeError:  # "can't start new thread"
            continue
        finally:
            threading.stack_size(previous)
    return None
