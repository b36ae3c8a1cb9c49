"""Child process for `verify --call`: imports the user's module, builds the fixed
function from the fixed source in a copy of the module's namespace, calls both."""
from __future__ import annotations

import importlib
import json
import os
import sys
import time

import torch

from .child import as_int


def _load(reference: str):
    module_name, _, attribute = reference.partition(":")
    return importlib.import_module(module_name), attribute


def main() -> int:
    job = json.load(sys.stdin)
    sys.path.insert(0, os.getcwd())
    device = job["device"]
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    started = time.perf_counter()
    module, function = _load(job["call"])
    factory_module, factory = _load(job["inputs"])
    fixed_namespace = dict(vars(module))
    exec(compile(job["fixed_source"], job["module_file"], "exec"), fixed_namespace)
    results = {}
    for variant, callable_ in (("before", getattr(module, function)), ("after", fixed_namespace[function])):
        args, kwargs = getattr(factory_module, factory)(device)
        try:
            results[variant] = as_int(callable_(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - reported as the verdict
            json.dump({"variant": variant, "error": f"{type(error).__name__}: {error}", "device": device}, sys.stdout)
            return 0
    json.dump({**results, "device": device, "seconds": time.perf_counter() - started}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
