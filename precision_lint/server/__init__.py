"""`precision-lint server`: a language server (LSP over stdio) that shows findings
as you type and offers the fixes as quick fixes. Needs the `server` extra (pygls)."""
from __future__ import annotations

import gc
import logging
import sys


def serve(unsafe_fixes: bool = False) -> int:
    try:
        from .app import build_server
        from .settings import EditorOptions
    except ImportError as error:  # pygls is an optional dependency
        print(
            f"precision-lint: error: the server needs pygls ({error}); install `precision-lint[server]`",
            file=sys.stderr,
        )
        return 2
    # stdout carries the protocol: anything else goes to stderr, which editors log
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="precision-lint: %(levelname)s: %(message)s")
    server = build_server(EditorOptions(unsafe_fixes=unsafe_fixes))
    _warm_up()
    server.start_io()
    return 0


def _warm_up() -> None:
    """Import the rules before the first document arrives, then move everything
    imported so far out of the garbage collector's way: a check allocates a whole
    tree, and each collection would otherwise walk every module object of pygls,
    lsprotocol and libcst too (measured: a warm check of 2,000 lines with a finding
    went from about 650 to 550 ms)."""
    from ..registry import all_rules

    all_rules()
    gc.freeze()
