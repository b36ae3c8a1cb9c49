"""When checks run: debounced after a change, one at a time per document, in worker
threads so the protocol thread keeps answering, and never reporting a result for a
version the editor has already replaced.

A check that is already running cannot be interrupted (it is pure Python in a
thread); a newer version waits for it, its result is dropped, and the newest
version is checked next. Versions in between are never checked. Everything here
runs on the event loop's thread; only `run` runs in the executor.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Callable

from .checking import CheckRequest, CheckResult


@dataclass
class _State:
    generation: int = 0
    timer: asyncio.TimerHandle | None = None
    running: asyncio.Future | None = None
    result: CheckResult | None = None
    waiters: list[asyncio.Future] = field(default_factory=list)


class CheckScheduler:
    def __init__(
        self,
        executor: Executor,
        run: Callable[[CheckRequest], CheckResult],
        snapshot: Callable[[str, int], CheckRequest | None],
        on_result: Callable[[CheckResult], None],
        on_failure: Callable[[str, BaseException], None],
        version_of: Callable[[str], int | None],
    ) -> None:
        self._executor = executor
        self._run = run
        self._snapshot = snapshot  # (uri, generation) -> request, None once closed
        self._on_result = on_result
        self._on_failure = on_failure
        self._version_of = version_of
        self._states: dict[str, _State] = {}

    # -- what the handlers call --------------------------------------------------
    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Check `uri` after `delay` seconds; a later call restarts the wait."""
        state = self._states.setdefault(uri, _State())
        if state.timer is not None:
            state.timer.cancel()
        state.timer = asyncio.get_running_loop().call_later(delay, self._start, uri)

    def invalidate(self, uri: str, delay: float = 0.0) -> None:
        """Something besides the text changed (config, a module it may import): the
        last result no longer counts, even for the same version."""
        self._states.setdefault(uri, _State()).generation += 1
        self.schedule(uri, delay)

    async def current(self, uri: str) -> CheckResult | None:
        """The result for the document as it is now, checking it now if need be.
        None when the document is closed meanwhile."""
        state = self._states.setdefault(uri, _State())
        if self._is_current(uri, state, state.result):
            return state.result
        waiter = asyncio.get_running_loop().create_future()
        state.waiters.append(waiter)
        if state.running is None:
            if state.timer is not None:
                state.timer.cancel()
            self._start(uri)
        return await waiter

    def last(self, uri: str) -> CheckResult | None:
        state = self._states.get(uri)
        return state.result if state is not None else None

    def close(self, uri: str) -> None:
        state = self._states.pop(uri, None)
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        for waiter in state.waiters:
            if not waiter.done():
                waiter.set_result(None)

    def close_all(self) -> None:
        for uri in list(self._states):
            self.close(uri)

    # -- internals ---------------------------------------------------------------
    def _is_current(self, uri: str, state: _State, result: CheckResult | None) -> bool:
        return result is not None and self._is_current_request(uri, state, result.request)

    def _is_current_request(self, uri: str, state: _State, request: CheckRequest) -> bool:
        return request.version == self._version_of(uri) and request.generation == state.generation

    def _start(self, uri: str) -> None:
        state = self._states.get(uri)
        if state is None:
            return
        state.timer = None
        if state.running is not None:
            return  # `_finished` starts the newest version when this one ends
        request = self._snapshot(uri, state.generation)
        if request is None:
            self.close(uri)
            return
        loop = asyncio.get_running_loop()
        state.running = loop.run_in_executor(self._executor, self._run, request)
        state.running.add_done_callback(lambda future: self._finished(uri, state, request, future))

    def _finished(self, uri: str, state: _State, request: CheckRequest, future: asyncio.Future) -> None:
        state.running = None
        if self._states.get(uri) is not state or future.cancelled():
            return  # closed (and maybe reopened) meanwhile, or shutting down
        current = self._is_current_request(uri, state, request)
        error = future.exception()
        if error is not None:
            self._on_failure(uri, error)
            if current:
                self._release(state, None)
                return
        elif current:
            state.result = future.result()
            self._on_result(state.result)
            self._release(state, state.result)
            return
        if state.timer is None:
            self._start(uri)  # superseded while it ran: check the newest version now

    @staticmethod
    def _release(state: _State, result: CheckResult | None) -> None:
        waiters, state.waiters = state.waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(result)
