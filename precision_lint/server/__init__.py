"""`precision-lint server`: a language server (LSP over stdio) that shows findings
as you type and offers the fixes as quick fixes. Needs the `server` extra (pygls)."""
from __future__ import annotations

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
    build_server(EditorOptions(unsafe_fixes=unsafe_fixes)).start_io()
    return 0
