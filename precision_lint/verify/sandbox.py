"""What replay code may contain: an allow-list of syntax, and names and attributes
that reach nothing outside the computation.

A replay is built from the user's source, so it is untrusted code. The parent checks
every statement it takes from the source (one that fails is left out, or the replay
is refused when it is the creation or an add); the child checks the whole program
again before it runs it, and runs it with only the builtins below. NumPy is allowed
for the totals kept in it, without what reaches files or raw memory. Nothing here
imports torch.
"""
from __future__ import annotations

import ast
import re

ALLOWED_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign,
    ast.AnnAssign, ast.For, ast.While, ast.If, ast.With, ast.withitem, ast.Expr, ast.Pass,
    ast.Break, ast.Continue, ast.Import, ast.ImportFrom, ast.alias, ast.Delete, ast.Try,
    ast.ExceptHandler, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict,
    ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension,
    ast.Compare, ast.Call, ast.keyword, ast.FormattedValue, ast.JoinedStr, ast.Constant,
    ast.Attribute, ast.Subscript, ast.Starred, ast.Name, ast.List, ast.Tuple, ast.Slice,
    ast.NamedExpr, ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop,
)  # fmt: skip

# Builtins a replay may name (the child gives it only these).
SAFE_BUILTINS = frozenset(
    {
        "len", "int", "float", "bool", "str", "range", "zip", "enumerate", "sum", "min", "max",
        "abs", "round", "list", "tuple", "dict", "set", "frozenset", "sorted", "reversed",
        "isinstance", "any", "all", "map", "filter", "print", "divmod", "pow", "slice", "iter",
        "next", "repr", "getattr", "hasattr", "None", "True", "False", "Exception",
        "ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError", "AttributeError",
    }
)  # fmt: skip

# Names that reach the interpreter, the file system, processes or the network.
DENIED_NAMES = frozenset(
    {
        "exec", "eval", "compile", "open", "__import__", "globals", "locals", "vars", "setattr",
        "delattr", "input", "breakpoint", "help", "exit", "quit", "memoryview", "type", "object",
        "super", "classmethod", "staticmethod", "property", "os", "sys", "subprocess", "shutil",
        "socket", "importlib", "builtins", "ctypes", "pickle", "marshal", "io", "pathlib",
        "signal", "threading", "multiprocessing", "gc", "inspect", "code", "codeop", "pty",
        "tempfile", "urllib", "http", "requests", "resource", "mmap", "posix", "nt", "runpy",
    }
)  # fmt: skip

# Attribute names that write files, load code, spawn or reach the interpreter,
# whatever they are read on (`torch.save`, `x.numpy().tofile`, `"{0.x}".format`).
DENIED_ATTRIBUTES = frozenset(
    {
        "save", "load", "from_file", "fromfile", "tofile", "hub", "ops", "classes", "library",
        "cpp_extension", "utils", "profiler", "serialization", "package", "jit", "compile",
        "export", "onnx", "multiprocessing", "rpc", "format", "format_map", "system", "popen",
        "spawn", "storage", "untyped_storage", "share_memory_", "init_process_group",
        "destroy_process_group", "new_group", "TCPStore", "FileStore", "HashStore", "PrefixStore",
        "checkpoint", "elastic", "launcher", "f_globals", "f_locals", "f_back",
        "f_builtins", "gi_frame", "gi_code", "cr_frame", "ag_frame", "tb_frame", "tb_next",
        "co_code", "mro", "modules", "settrace", "setprofile", "_C", "_dynamo", "_inductor",
        "_export", "_subclasses", "_utils", "_ops", "_classes", "_library", "_jit_internal",
        "_share_filename_cpu_", "_share_fd_cpu_", "_new_shared", "_typed_storage",
        "_untyped_storage", "_dump_snapshot", "_record_memory_history", "remote",
    }
)  # fmt: skip
# NumPy's: what reads or writes files (`np.loadtxt`, `np.memmap`, `np.lib.format`), reaches
# raw memory (`a.ctypes`, `as_strided`) or runs tools (`np.testing`, `np.f2py`, `np.test`).
# `np.save`, `np.load`, `tofile`, `fromfile` and `dump` are denied above already.
NUMPY_DENIED_ATTRIBUTES = frozenset(
    {
        "lib", "memmap", "open_memmap", "loadtxt", "savetxt", "savez", "savez_compressed",
        "genfromtxt", "fromregex", "DataSource", "npyio", "ctypeslib", "ctypes", "as_strided",
        "stride_tricks", "f2py", "distutils", "testing", "test", "show_config", "show_runtime",
        "core", "_core", "_pytesttester", "_mat", "_globals", "_distributor_init", "_typing",
    }
)  # fmt: skip
DENIED_ATTRIBUTES = DENIED_ATTRIBUTES | NUMPY_DENIED_ATTRIBUTES
_DENIED_ATTRIBUTE_PARTS = re.compile(r"(?i)storage|shared?_|file|pickle|dump|^__|(^|_)(save|load)($|_)")

# Names the generated code uses; the user's source may not use any name that starts with `__`.
GENERATED_NAME = re.compile(r"^__(h|device|replay|a\d+|s\d+|m\d+|f|e|call|self)$")
# What the generated code may read on the hooks object `__h`.
HOOK_API = frozenset(
    {
        "start", "add", "exact", "trace", "box", "f64", "settle", "value", "angle", "exact_of",
        "input", "arm", "loop", "bounded", "calls", "self_object", "legacy", "cuda", "device",
        "opaque", "module_cast", "run", "test", "failed",
    }
)  # fmt: skip
ALLOWED_IMPORT = re.compile(r"^(torch(\.(nn|distributed|cuda|linalg|fft|special|nn\.functional|amp|autograd))*|numpy)$")


def problems(source: str, generated: bool = True) -> list[str]:
    """Why `source` may not run as a replay (empty when it may). `generated`: the
    names the replay builder itself writes (`__h`, `__device`, ...) are allowed."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [f"does not parse: {error.msg}"]
    found: list[str] = []
    functions = 0
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED_NODES):
            found.append(f"`{type(node).__name__}` is not allowed")
            continue
        if isinstance(node, ast.FunctionDef):
            functions += 1
            if not (generated and GENERATED_NAME.match(node.name)) or node.decorator_list:
                found.append(f"a function definition (`def {node.name}`) is not allowed")
        elif isinstance(node, ast.Name):
            found.extend(_name_problem(node.id, generated))
        elif isinstance(node, ast.arg):
            found.extend(_name_problem(node.arg, generated))
        elif isinstance(node, ast.Attribute):
            found.extend(_attribute_problem(node, generated))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level:
                modules = ["." * node.level + (node.module or "")]
            for module in modules:
                if not ALLOWED_IMPORT.match(module):
                    found.append(f"importing `{module}` is not allowed (only torch and numpy)")
            for alias in node.names:
                if isinstance(node, ast.ImportFrom):
                    found.extend(_attribute_name_problem(alias.name, f"from {node.module} import {alias.name}"))
                if alias.asname:
                    found.extend(_name_problem(alias.asname, generated))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            # `getattr(print, "__self__")`: the name read, as if spelled with a dot
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                found.extend(_attribute_name_problem(node.args[1].value, f"getattr(..., {node.args[1].value!r})"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            found.append("bytes literals are not allowed")
    return list(dict.fromkeys(found))


def _name_problem(name: str, generated: bool) -> list[str]:
    if name in DENIED_NAMES:
        return [f"the name `{name}` is not allowed"]
    if name.startswith("__") and not (generated and GENERATED_NAME.match(name)):
        return [f"the name `{name}` is not allowed (names starting with `__`)"]
    return []


def _attribute_problem(node: ast.Attribute, generated: bool) -> list[str]:
    if isinstance(node.value, ast.Name) and node.value.id == "__h" and generated:
        return [] if node.attr in HOOK_API else [f"`__h.{node.attr}` is not part of the replay hooks"]
    return _attribute_name_problem(node.attr, f".{node.attr}")


def _attribute_name_problem(name: str, spelled: str) -> list[str]:
    if name in DENIED_ATTRIBUTES or _DENIED_ATTRIBUTE_PARTS.search(name):
        return [f"`{spelled}` is not allowed in a replay"]
    return []


def safe_attribute_name(name: str) -> bool:
    """For the child's getattr/hasattr: what a literal attribute access could read."""
    return isinstance(name, str) and not _attribute_name_problem(name, name)
