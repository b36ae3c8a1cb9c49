"""Child process for `verify --call MODULE:FUNCTION --inputs MODULE:FACTORY`: imports
the module instrumented, builds the inputs with `factory(device)` and calls the
function once, then writes what every site of the module saw (imports torch)."""
from __future__ import annotations

import importlib
import json
import os
import sys


def main() -> int:
    with open(os.environ["PRECISION_LINT_SANITIZER"], encoding="utf-8") as stream:
        job = json.load(stream)
    sys.path.insert(0, os.getcwd())
    import torch

    from .realrun import SiteHooks, innermost_frame_in, install

    device = job.get("device", "auto")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    hooks = SiteHooks(job["mode"], job.get("offsets", {}), job.get("scale", 1.0))
    finder = install(job["files"], frozenset(job["codes"]), job["variant"], hooks, job.get("projects"), job.get("file_codes"))
    module_name, _, function = job["call"].partition(":")
    factory_module, _, factory = job["inputs"].partition(":")
    errors, call_error = [], None
    try:
        module = importlib.import_module(module_name)
        args, kwargs = getattr(importlib.import_module(factory_module), factory)(device)
        getattr(module, function)(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - reported beside the verdicts
        call_error = f"{type(error).__name__}: {error}"[:300]
        where = innermost_frame_in(sys.exc_info()[2], finder.files)
        if where is not None:
            errors.append({"test": job["call"], "path": where[0], "line": where[1], "error": call_error})
    payload = {"sites": hooks.results(), "errors": errors, "loaded": finder.loaded, "call_error": call_error, "device": device}
    with open(job["out"], "w", encoding="utf-8") as stream:
        json.dump(payload, stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
