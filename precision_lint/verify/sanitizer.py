"""The pytest plugin behind `verify --pytest` (`-p precision_lint.verify.sanitizer`):
with `PRECISION_LINT_SANITIZER` naming a job file, it instruments the flagged
modules as the tests import them, and at the end of the session writes what every
site saw. It changes nothing when that variable is not set."""
from __future__ import annotations

import json
import os

_STATE: dict = {}


def pytest_configure(config) -> None:
    job_file = os.environ.get("PRECISION_LINT_SANITIZER")
    if not job_file:
        return
    with open(job_file, encoding="utf-8") as stream:
        job = json.load(stream)
    from .realrun import SiteHooks, install

    hooks = SiteHooks(job["mode"], job.get("offsets", {}), job.get("scale", 1.0))
    finder = install(job["files"], frozenset(job["codes"]), job["variant"], hooks, job.get("projects"), job.get("file_codes"))
    _STATE.update(job=job, hooks=hooks, finder=finder, tests={}, errors=[])


def pytest_runtest_makereport(item, call) -> None:
    if not _STATE or call.when != "call":
        return
    _STATE["tests"][item.nodeid] = "failed" if call.excinfo is not None else "passed"
    if call.excinfo is not None:
        from .realrun import innermost_frame_in

        where = innermost_frame_in(call.excinfo.tb, _STATE["finder"].files)
        if where is not None:
            error = f"{call.excinfo.type.__name__}: {call.excinfo.value}"[:300]
            _STATE["errors"].append({"test": item.nodeid, "path": where[0], "line": where[1], "error": error})


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _STATE:
        return
    job = _STATE["job"]
    payload = {
        "sites": _STATE["hooks"].results(),
        "tests": _STATE["tests"],
        "errors": _STATE["errors"],
        "loaded": _STATE["finder"].loaded,
        "exitstatus": int(exitstatus),
    }
    with open(job["out"], "w", encoding="utf-8") as stream:
        json.dump(payload, stream)
