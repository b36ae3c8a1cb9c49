"""Instruments a whole module for a real run (`verify --pytest`, `verify --call`):
the code runs as written, on the tests' own inputs, with every flagged site
carrying an exact shadow. No torch here (the hooks object is given at import).

Each site statement is replaced, on its own line(s), by itself plus the hook calls
joined with `; `, so line numbers do not move and one-line bodies stay valid. The
fixed variant applies the fixes of every verifiable finding in the module.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import libcst as cst

from ..engine import check_source
from ..model.semantic import build_model
from ..project.index import ModuleContext
from ..project.modules import identify
from ..registry import all_rules
from .program import ReplayBuilder
from .sites import VERIFIABLE, NoReplay, find_site
from .source_view import Edit, Rewriter, SourceIndex, all_nodes

HOOK = "_precision_lint_h"
TEMP = "_precision_lint_"


@dataclass
class SiteInfo:
    number: int
    code: str
    path: str
    line: int
    column: int
    kind: str = ""
    function: str = ""
    dtype: str | None = None
    limit: int | None = None
    integral_fix: bool = True
    first_line: int = 0  # the function the site lives in, for errors raised there
    last_line: int = 0
    skipped: str = ""  # why it is not instrumented

    def as_json(self) -> dict:
        return asdict(self)


def verifiable_codes() -> frozenset[str]:
    return frozenset(r.code for r in all_rules() if not r.checks_suppressions) & VERIFIABLE


def instrument(text: str, path: str, codes: frozenset[str], variant: str, project: dict | None = None) -> tuple[str, list[SiteInfo]]:
    """`project`: the slice of the project index the parent checked the file with, so
    that findings across modules are found here too."""
    identity = identify(path)
    diagnostics = [d for d in check_source(text, path, codes, identity, project) if d.fix is not None and d.code in VERIFIABLE]
    if not diagnostics:
        return text, []
    model = build_model(cst.parse_module(text), identity.name, ModuleContext(project), identity.package)
    source = SourceIndex(model, text)
    fixes: list[Edit] = []
    sites: list[SiteInfo] = []
    builders = []
    for number, diagnostic in enumerate(diagnostics):
        info = SiteInfo(number, diagnostic.code or "", path, diagnostic.location.row, diagnostic.location.column)
        sites.append(info)
        try:
            site = find_site(source, model, diagnostic)
            builder = ReplayBuilder(source, model, site, number=number, hook=HOOK, temp=TEMP)
            builder._locate()
        except NoReplay as reason:
            info.skipped = str(reason)
            continue
        fixes.extend(site.fix_edits)
        info.kind, info.function = site.kind, builder._function_name()
        info.dtype = site.dtype.name if site.dtype is not None else None
        info.limit = site.dtype.exact_integer_limit if site.dtype is not None else None
        info.integral_fix = site.integral_fix
        scope = builder._scope_of(site.anchor)
        if isinstance(scope, cst.FunctionDef):
            info.first_line, info.last_line = source.line(scope), source.positions[scope].end.line
        builders.append((info, builder))
    fix_edits = fixes if variant == "after" else []
    replacements: list[Edit] = []
    taken: list[tuple[int, int]] = []
    for info, builder in builders:
        builder.rewriter = Rewriter(source, fix_edits)
        builder.collectives = False
        builder.inputs = {}
        pieces = _site_statements(builder, source, fix_edits)
        spans = [source.offsets(small) for small, _ in pieces]
        if any(_overlaps(span, other) for span in spans for other in taken):
            info.skipped = "its statements are another site's too: only that one is instrumented"
            continue
        taken.extend(spans)
        for (small, text_lines), (start, end) in zip(pieces, spans):
            replacements.append(Edit(start, end, "; ".join(text_lines), None, -10))
    rendered = Rewriter(source, fix_edits + replacements).render_range(0, len(text))
    return rendered, sites


def _site_statements(builder: ReplayBuilder, source: SourceIndex, fix_edits: list[Edit]):
    """(small statement, the texts that replace it) for every statement of the site."""
    render = Rewriter(source, fix_edits)
    site = builder.site
    out = []
    seen: set[int] = set()

    def add(small, lines):
        if id(small) not in seen:
            seen.add(id(small))
            out.append((small, [text for text, _, _ in lines]))

    if builder.creation_statement is not None:
        line = source.line(builder.creation_statement)
        add(builder.creation_statement, builder._creation_lines(render.render(builder.creation_statement), line))
        for small in _scopes_statements(builder):
            if id(small) in builder.add_statements:
                add(small, builder._add_lines(small, render, source.line(small)))
            elif small is not builder.creation_statement and builder._writes_target(small):
                add(small, builder._mirror_lines(small, render, source.line(small)))
    if site.value is not None:
        add(builder.value_statement, [(builder._value_text(builder.value_statement, render), 0, "value")])
        if builder.angle is not None and builder.angle[0] is not builder.value_statement:
            add(builder.angle[0], [(builder._value_text(builder.angle[0], render), 0, "value")])
    return out


def _scopes_statements(builder: ReplayBuilder):
    """The statements that may touch the accumulator: the creating function (after
    the creation) for a local, every method of the class for an attribute."""
    creation_scope = builder._scope_of(builder.creation_statement)
    scopes = [creation_scope]
    cls = builder._class_of(creation_scope)
    if cls is not None and builder.owner != "None":
        scopes = builder._methods(cls)
    start = builder.source.offsets(builder.creation_statement)[0]
    for scope in scopes:
        for small in builder._smalls(scope):
            if scope is creation_scope and builder.source.offsets(small)[0] < start:
                continue
            yield small
    for add in builder.site.adds:  # adds elsewhere (a module-level accumulator)
        yield add.statement


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def statement_lines(text: str) -> int:
    return text.count("\n") + 1


__all__ = ["HOOK", "SiteInfo", "instrument", "verifiable_codes", "all_nodes"]
