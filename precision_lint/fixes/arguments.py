"""Text edits on a call's arguments."""
from __future__ import annotations

import libcst as cst

from ..rule import NodeEdit


def drop_arg(call: cst.Call, arg: cst.Arg) -> tuple[NodeEdit, ...]:
    """Delete one argument with its comma; the rest of the call stays as written.
    Edits anchor on `Arg` nodes: a value's own position leaves out its parentheses."""
    index = next(i for i, a in enumerate(call.args) if a is arg)
    if index + 1 < len(call.args):
        return (NodeEdit(arg, "", until=call.args[index + 1]),)
    if index > 0:  # the last one: from the end of the previous argument
        return (NodeEdit(call.args[index - 1], "", where="after", until=arg),)
    return (NodeEdit(arg, ""),)
