"""Real runs (`verify --pytest`, `verify --call`), in a child process (imports torch):
an import hook that instruments the flagged modules, and the hooks object their
sites call, one `Recorder` per site.

Three passes use this: *observe* (as written, from zero: how far the real inputs
take each site and whether it ever lost exactness), *stress* (each accumulator
started near its limit: an integer one just below it, a float one where the spacing
is 8), *stress* of the fixed code (the same offsets).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import traceback

from .hooks import Recorder
from .instrument import HOOK, instrument
from .starts import STRESS


class SiteHooks:
    """`_precision_lint_h`: routes each call to the site's recorder. A site's
    recorder keeps the trajectory of every instance (each time its creation runs)."""

    def __init__(self, mode: str, offsets: dict[str, int], scale: float = 1.0) -> None:
        self.mode = mode
        self.offsets = offsets
        self.scale = scale
        self.recorders: dict[tuple[str, int], Recorder] = {}
        self.infos: dict[tuple[str, int], dict] = {}
        self.reached: dict[tuple[str, int], int] = {}

    def for_module(self, path: str, sites: list) -> "ModuleHooks":
        for info in sites:
            key = (path, info.number)
            self.infos[key] = info.as_json()
            # stress: integers just below their limit (int32 two below 2^31, as the
            # replays start them; it has no `high`), floats where the spacing is 8
            run = STRESS if self.mode == "stress" else "zero"
            self.recorders[key] = Recorder("cpu", run, self.offsets.get(f"{path}:{info.number}"), info.dtype, self.scale)
        return ModuleHooks(self, path)

    def results(self) -> list[dict]:
        out = []
        for key, info in self.infos.items():
            recorder = self.recorders[key]
            out.append({**info, "executed": self.reached.get(key, 0), **recorder.summary()})
        return out


class ModuleHooks:
    def __init__(self, hooks: SiteHooks, path: str) -> None:
        self._hooks = hooks
        self._path = path

    def _recorder(self, site: int) -> Recorder:
        key = (self._path, site)
        self._hooks.reached[key] = self._hooks.reached.get(key, 0) + 1
        return self._hooks.recorders[key]

    def start(self, site, value, owner):
        recorder = self._recorder(site)
        if isinstance(value, object) and hasattr(value, "device"):
            recorder.device_name = str(value.device)
        return recorder.start(site, value, owner)

    def box(self, site, owner):
        return self._hooks.recorders[(self._path, site)].box(site, owner)

    def exact(self, value):
        return Recorder.exact(self._any(), value)

    def f64(self, value):
        return Recorder.f64(self._any(), value)

    def settle(self, site, value, line):
        return self._hooks.recorders[(self._path, site)].settle(site, value, line)

    def trace(self, site, value, owner, line, kind):
        self._recorder(site).trace(site, value, owner, line, kind)

    def value(self, site, value, exact):
        return self._recorder(site).value(site, value, exact)

    def angle(self, site, value, exact):
        return self._hooks.recorders[(self._path, site)].angle(site, value, exact)

    def exact_of(self, site):
        return self._hooks.recorders[(self._path, site)].exact_of(site)

    def _any(self) -> Recorder:
        return next(iter(self._hooks.recorders.values()))


class InstrumentingFinder(importlib.abc.MetaPathFinder):
    """Finds the flagged modules by file and loads them instrumented (never from a
    cached .pyc)."""

    def __init__(self, files: list[str], codes: frozenset[str], variant: str, hooks: SiteHooks, projects: dict | None = None, file_codes: dict | None = None) -> None:
        self.files = {os.path.realpath(f) for f in files}
        # per file, the slice of the project index the parent checked it with
        self.projects = {os.path.realpath(f): value for f, value in (projects or {}).items()}
        self.codes = codes
        # per file, the codes its own config enables (else `codes`)
        self.file_codes = {os.path.realpath(f): frozenset(value) for f, value in (file_codes or {}).items()}
        self.variant = variant
        self.hooks = hooks
        self.loaded: list[str] = []

    def find_spec(self, fullname, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or os.path.realpath(spec.origin) not in self.files:
            return None
        spec.loader = InstrumentingLoader(fullname, spec.origin, self)
        return spec


class InstrumentingLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, finder: InstrumentingFinder) -> None:
        super().__init__(fullname, path)
        self.finder = finder

    def get_code(self, fullname):
        with open(self.path, encoding="utf-8") as stream:
            text = stream.read()
        project = self.finder.projects.get(os.path.realpath(self.path))
        codes = self.finder.file_codes.get(os.path.realpath(self.path), self.finder.codes)
        self._text, self._sites = instrument(text, self.path, codes, self.finder.variant, project)
        return compile(self._text, self.path, "exec", dont_inherit=True)

    def exec_module(self, module) -> None:
        code = self.get_code(module.__name__)
        module.__dict__[HOOK] = self.finder.hooks.for_module(os.path.realpath(self.path), self._sites)
        self.finder.loaded.append(os.path.realpath(self.path))
        exec(code, module.__dict__)  # the user's own module, as they run it


def install(files: list[str], codes: frozenset[str], variant: str, hooks: SiteHooks, projects: dict | None = None, file_codes: dict | None = None) -> InstrumentingFinder:
    finder = InstrumentingFinder(files, codes, variant, hooks, projects, file_codes)
    sys.meta_path.insert(0, finder)
    return finder


def innermost_frame_in(trace, files: set[str]) -> tuple[str, int] | None:
    """Where in the flagged files an exception was raised (the innermost frame)."""
    found = None
    for frame, line in traceback.walk_tb(trace):
        path = os.path.realpath(frame.f_code.co_filename)
        if path in files:
            found = (path, line)
    return found
