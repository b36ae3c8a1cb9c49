"""Jupyter notebooks (.ipynb), checked as Ruff checks them: the code cells joined
into one module (a name imported in one cell is known in the next), IPython magics
and shell escapes left out, each finding placed in its cell (`nb.ipynb:cell 3:2:5`,
counting every cell as Jupyter does), and fixes written back into the cells'
sources with the notebook's JSON layout (indent, key order, escaping, final
newline) kept.

The module the checker sees: each code cell's lines, where a magic line is `pass`
at the same indentation (a block stays a block; each line a backslash continues it
onto is one more such `pass`; so is a cell's only line where it calls a line magic
without its `%`, as IPython allows there), then a comment line that ends the cell.
Fixes edit code, never comment lines, so these markers split the fixed text into cells
again; a cell that starts with a cell magic (`%%bash`) is not Python and is left out
whole.
"""
from __future__ import annotations

import difflib
import io
import json
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from .diagnostics import Diagnostic, Edit, Fix, Location, Related
from .source import content_digest

_MARKER = "# precision-lint: end of cell {number}"
_PLACEHOLDER = "{indent}pass  # precision-lint: magic {number}"
_PLACEHOLDER_LINE = re.compile(r"^([ \t]*)pass  # precision-lint: magic (\d+)$")
# `%time f()`, `!ls`, `?obj`, `files = !ls`, `x = %env`; `obj?` (help) is below
_MAGIC_START = re.compile(r"^[ \t]*(?:[%!?]|[A-Za-z_][\w.]*[ \t]*=[ \t]*[%!])")
_HELP_END = re.compile(r"^[ \t]*[A-Za-z_][\w.]*\?{1,2}[ \t]*$")
# A cell of one line may call a line magic without its `%` (IPython's automagic, on
# by default, applies to single-line cells only): `pip install x`, `ls ./data`. These
# are IPython's default line magics and shell aliases.
_AUTOMAGICS = frozenset(
    """alias alias_magic autoawait autocall automagic bookmark cat cd clear colors conda config
    connect_info cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir
    less lf lk ll load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro
    magic mamba man matplotlib micromamba mkdir more mv notebook page pastebin pdb pdef pdoc pfile
    pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab qtconsole
    quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env
    store sx system tb time timeit unalias unload_ext who who_ls whos xdel xmode""".split()
)
_AUTOMAGIC_CALL = re.compile(r"^[ \t]*([A-Za-z_]\w*)(?:[ \t]+(.*))?$")


class NotebookError(ValueError):
    """The file is not a notebook we can read."""


@dataclass(frozen=True)
class CellSpan:
    index: int  # 0-based among all cells
    start_row: int  # its first row in the joined module (1-based)
    line_count: int
    ends_with_newline: bool


@dataclass
class Notebook:
    path: Path
    raw: bytes
    data: dict
    source: str  # the joined module
    spans: list[CellSpan] = field(default_factory=list)
    magics: dict[int, str] = field(default_factory=dict)  # placeholder number -> the line it stands for

    @property
    def digest(self) -> str:
        return content_digest(self.raw)

    def cell_text(self, span: CellSpan) -> str:
        return _text(self.data["cells"][span.index]["source"])


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def read_notebook(path: Path, raw: bytes | None = None) -> Notebook:
    raw = path.read_bytes() if raw is None else raw
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise NotebookError(f"not UTF-8 (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise NotebookError("no `cells` list: not a Jupyter notebook (nbformat 4)")
    notebook = Notebook(path, raw, data, "")
    if not _is_python(data):
        return notebook  # an R or Julia notebook: nothing for us
    lines: list[str] = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        text = _text(cell.get("source", ""))
        if text.lstrip().startswith("%%"):
            continue  # a cell magic: the cell is not Python
        cell_lines = _without_magics(text, notebook.magics)
        notebook.spans.append(CellSpan(index, len(lines) + 1, len(cell_lines), text.endswith("\n") or not text))
        lines.extend(cell_lines)
        lines.append(_MARKER.format(number=index + 1) + "\n")
    notebook.source = "".join(lines)
    return notebook


def _is_python(data: dict) -> bool:
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    language = (metadata.get("language_info") or {}).get("name") or (metadata.get("kernelspec") or {}).get("language")
    return language is None or str(language).lower() in ("python", "python3", "ipython")


def _without_magics(text: str, magics: dict[int, str]) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    result: list[str] = []
    continued: str | None = None  # the indent of a magic whose last line ended with `\`
    automagic = _automagic_line(lines)
    for index, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        if (
            continued is not None or index == automagic
            or ((_MAGIC_START.match(bare) or _HELP_END.match(bare)) and _starts_statement(result))
        ):  # fmt: skip
            # IPython joins a magic's or shell escape's lines that end with a backslash
            # (`!pip install a \` then `    b`): each line of it is left out alike
            number = len(magics) + 1
            magics[number] = line
            indent = continued if continued is not None else bare[: len(bare) - len(bare.lstrip())]
            if index == automagic:
                indent = ""  # the cell's only line: IPython takes away its indentation
            result.append(_PLACEHOLDER.format(indent=indent, number=number) + "\n")
            continued = indent if bare.endswith("\\") else None
        else:
            result.append(line)
    return result


def _automagic_line(lines: list[str]) -> int | None:
    """The index of a cell's only line (blank lines before it aside: IPython drops
    them) where it calls a line magic without `%` and Python cannot compile it as it
    stands. A line that Python reads (`ls = 1`, `ls -l`) stays code, and IPython too
    reads a name followed by `=` or `,` as Python."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or first != len(lines) - 1:
        return None
    call = _AUTOMAGIC_CALL.match(lines[first].rstrip("\r\n"))
    if call is None or call.group(1) not in _AUTOMAGICS or (call.group(2) or "").startswith(("=", ",")):
        return None
    try:
        with warnings.catch_warnings():  # `ls is 1` warns; under -W error it would raise
            warnings.simplefilter("ignore")
            compile(lines[first], "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return first  # (a line nested too deep for the compiler, `ls ------...1`, too)
    return None


def _starts_statement(before: list[str]) -> bool:
    """Whether the next line starts a statement: not inside brackets, a string or a
    backslash continuation (a line starting with `%` there is Python's operator)."""
    if not before:
        return True
    if before[-1].rstrip("\r\n").endswith("\\"):
        return False
    try:
        for _ in tokenize.generate_tokens(io.StringIO("".join(before)).readline):
            pass
    except IndentationError:
        return True  # a dedent the tokenizer dislikes: still a statement's start
    except (tokenize.TokenError, SyntaxError):
        return False  # EOF inside a statement or a string
    return True


# -- positions ----------------------------------------------------------------------
def _cell_of(notebook: Notebook, row: int) -> CellSpan | None:
    for span in notebook.spans:
        if span.start_row <= row < span.start_row + span.line_count:
            return span
    return None


def _local(span: CellSpan, location: Location) -> Location:
    row = min(max(location.row - span.start_row + 1, 1), max(span.line_count, 1))
    return Location(row, location.column)


def in_cells(notebook: Notebook, diagnostic: Diagnostic) -> Diagnostic:
    """The diagnostic with its cell, and rows counted within that cell."""
    span = _cell_of(notebook, diagnostic.location.row)
    if span is None:
        return diagnostic  # about the whole file (it could not be read)
    fix = diagnostic.fix
    if fix is not None:
        fix = Fix(fix.applicability, fix.message, tuple(Edit(e.content, _local(span, e.location), _local(span, e.end_location)) for e in fix.edits))
    return replace(
        diagnostic,
        cell=span.index + 1,
        location=_local(span, diagnostic.location),
        end_location=_local(span, diagnostic.end_location),
        related=tuple(_related(notebook, r) for r in diagnostic.related),
        fix=fix,
    )


def _related(notebook: Notebook, related: Related) -> Related:
    span = _cell_of(notebook, related.location.row)
    if span is None:
        return related
    return Related(related.message, _local(span, related.location), _local(span, related.end_location), span.index + 1)


def cell_texts(notebook: Notebook) -> dict[int, str]:
    """Each checked cell's source (by 1-based cell number), for showing lines."""
    return {span.index + 1: notebook.cell_text(span) for span in notebook.spans}


# -- writing fixes back --------------------------------------------------------------
def fixed_cells(notebook: Notebook, fixed_source: str) -> dict[int, str]:
    """The new source of each checked cell (by 0-based index) from the fixed module.
    Raises NotebookError when the cell markers are not where they must be."""
    lines = fixed_source.splitlines(keepends=True)
    cells: dict[int, str] = {}
    current: list[str] = []
    spans = iter(notebook.spans)
    for line in lines:
        placeholder = _PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
        if placeholder is not None and int(placeholder.group(2)) in notebook.magics:
            current.append(notebook.magics[int(placeholder.group(2))])
            continue
        span = None
        if line.startswith("# precision-lint: end of cell "):
            span = next(spans, None)
            if span is None or line.rstrip("\r\n") != _MARKER.format(number=span.index + 1):
                raise NotebookError("the fixed code no longer has its cells in order")
            text = "".join(current)
            if not span.ends_with_newline and text.endswith("\n"):
                text = text[:-1]
            cells[span.index] = text
            current = []
            continue
        current.append(line)
    if next(spans, None) is not None or current:
        raise NotebookError("the fixed code no longer has its cells in order")
    return cells


def _layout(text: str, data: dict) -> dict | None:
    """The json.dumps arguments that write `data` as `text` exactly, or None."""
    for indent in (1, 2, 4, 3, None):
        for ensure_ascii in (False, True):
            separators = (",", ":") if indent is None else None
            out = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, separators=separators)
            for ending in ("", "\n"):
                if out + ending == text:
                    return {"indent": indent, "ensure_ascii": ensure_ascii, "separators": separators, "ending": ending}
    return None


def with_cells(notebook: Notebook, cells: dict[int, str]) -> bytes:
    """The notebook's bytes with these cell sources, in the notebook's own layout
    (a list of lines stays a list of lines). Raises NotebookError when the file's
    layout is not one json.dumps writes (so it could not be kept)."""
    text = notebook.raw.decode("utf-8")
    layout = _layout(text, notebook.data)
    if layout is None:
        raise NotebookError("its JSON layout is not one that can be written back unchanged (the fixes were not written)")
    data = json.loads(text)
    for index, source in cells.items():
        cell = data["cells"][index]
        cell["source"] = source.splitlines(keepends=True) if isinstance(cell.get("source"), list) else source
    ending = layout.pop("ending")
    return (json.dumps(data, **layout) + ending).encode("utf-8")


def cell_diff(notebook: Notebook, cells: dict[int, str], display: str) -> str:
    """A unified diff per changed cell, as `--diff` shows a notebook."""
    chunks = []
    for span in notebook.spans:
        before, after = notebook.cell_text(span), cells.get(span.index)
        if after is None or after == before:
            continue
        label = f"{display}:cell {span.index + 1}"
        chunks.append(
            "".join(difflib.unified_diff(_lines(before), _lines(after), fromfile=label, tofile=label))
        )
    return "".join(chunks)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of cell\n"
    return lines
