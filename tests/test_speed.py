"""The speed-ups of issue 14, each held to the answer of the slow way it replaces:
placing findings from their statement alone, the definition
lines of module summaries, the noqa prefilter, garbage collection paused per file,
the rule catalog read from source, and the lazy imports (what `--version`, `rule`
and a cached run import). Speed itself is measured in benchmarks/bench.py."""
from __future__ import annotations

import gc
import json
import re
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from conftest import HAZARD, REPO, STATEFUL, UNSAFE
from precision_lint import positions
from precision_lint.catalog import entry_by_code_or_name, rule_codes, rule_entries
from precision_lint.config import Settings
from precision_lint.engine import check_source
from precision_lint.model.walk import walk
from precision_lint.positions import NotLocal, SourcePositions, StatementPositions, forget_positions, positions_for
from precision_lint.project.summary import _DefinitionLines
from precision_lint.registry import all_rules
from precision_lint.project.analysis import run_project
from precision_lint.runner import Job, collector_paused, run_job, run_jobs
from precision_lint.suppression import noqa_by_line

PH001 = frozenset({"PH001"})

# Shapes the statement-local positions must get right: header comments, decorators with
# comments between them, `a; b` on one line, nested blocks, a CRLF file and one without
# a trailing newline.
SHAPES = [
    "# header\n\n# about f\n@decorator\n# between\n@other(1,\n  2)\n\ndef f(x):\n    return x + 1\n# tail\n\nx = 1; y = 2\n",
    "import torch\n\n\nclass A:\n    '''doc'''\n\n    def g(self, n):\n        if n:\n            return torch.zeros(\n                n,\n            )\n",
    "import torch\r\nacc = torch.zeros(1)\r\nfor x in xs:\r\n    acc += (x == 0).sum()\r\n",
    "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()",
    "if True:\n    def h():\n        pass\nelse:\n    h = None\n\n\n\nasync def k():\n    async with a as b:\n        await b\n",
]


def _spans(module, source, where):
    return {id(node): where.span(node) for node in walk(module) if isinstance(node, (cst.BaseExpression, cst.BaseStatement, cst.Arg))}


@pytest.mark.parametrize("source", SHAPES + [p.read_text() for p in sorted((REPO / "tests" / "fixtures").rglob("*.py"))[:40]])
def test_statement_positions_are_the_whole_module_pass(source):
    module = cst.parse_module(source)
    local = StatementPositions.build(module, source)
    assert local is not None
    try:
        assert _spans(module, source, local) == _spans(module, source, SourcePositions(module, source))
    finally:
        forget_positions()


def test_findings_are_placed_without_a_pass_over_the_module(monkeypatch):
    source = "import torch\n\n" + "def other(x):\n    return x * 2\n\n" * 200 + HAZARD
    expected = check_source(source, "a.py", PH001)

    def whole_module_pass(module):
        raise AssertionError("the whole module was regenerated")

    monkeypatch.setattr(positions, "resolve_positions", whole_module_pass)
    placed = check_source(source, "a.py", PH001)
    assert [(d.location, d.end_location, d.fix) for d in placed] == [(d.location, d.end_location, d.fix) for d in expected]
    assert placed and placed[0].location.row == 604  # `acc = torch.zeros(1)`, after 200 functions


@pytest.mark.parametrize("source", ["import torch\n\x0cacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\n", "import torch\racc = torch.zeros(1)\rfor x in xs:\r    acc += (x == 0).sum()\r"])
def test_form_feeds_and_lone_carriage_returns_take_the_whole_module_pass(source):
    module = cst.parse_module(source)
    assert StatementPositions.build(module, source) is None
    assert isinstance(positions_for(module, source), SourcePositions)
    forget_positions()


def test_a_statement_libcst_does_not_reproduce_falls_back(monkeypatch):
    module = cst.parse_module(HAZARD)
    local = StatementPositions.build(module, HAZARD)
    local.lines[1] = "acc = something else entirely\n"  # as if libcst regenerated it differently
    node = module.body[1].body[0].value
    with pytest.raises(NotLocal):
        local.span(node)


def test_a_libcst_whose_codegen_internals_differ_is_served_the_whole_module_pass(monkeypatch):
    # StatementPositions drives libcst's codegen state, which is not its public API
    expected = check_source(HAZARD, "a.py", PH001)
    monkeypatch.setattr(positions, "PositionProvidingCodegenState", None)  # a libcst without it
    assert isinstance(positions_for(cst.parse_module(HAZARD), HAZARD), SourcePositions)
    assert check_source(HAZARD, "a.py", PH001) == expected
    monkeypatch.setattr(positions, "PositionProvidingCodegenState", lambda **kwargs: object())  # one that changed
    assert check_source(HAZARD, "a.py", PH001) == expected


def test_the_positions_speedup_can_be_turned_off(monkeypatch):
    from precision_lint import speedups

    monkeypatch.setattr(speedups, "_OFF", frozenset({"positions"}))
    module = cst.parse_module(HAZARD)
    assert isinstance(positions_for(module, HAZARD), SourcePositions)
    forget_positions()


# -- discovery ------------------------------------------------------------------------
def test_discovery_matches_each_path_without_fnmatch_per_pattern(tmp_path, monkeypatch):
    import fnmatch

    from precision_lint.discovery import discover

    for folder in ("pkg", "pkg/sub", "build", "node_modules/x"):
        (tmp_path / folder).mkdir(parents=True)
        for number in range(30):
            (tmp_path / folder / f"m{number}.py").write_text("x = 1\n")
    calls = []
    real = fnmatch.fnmatchcase
    monkeypatch.setattr(fnmatch, "fnmatchcase", lambda *a: calls.append(a) or real(*a))
    found = discover([tmp_path], Settings(root=tmp_path))
    assert len(found) == 60  # build/ and node_modules/ are excluded by default
    assert len(calls) < 100  # the folder the user named, once per pattern; not per file


def test_a_named_folder_is_walked_even_when_excluded_but_the_folders_below_it_are_not(tmp_path):
    from precision_lint.discovery import discover

    for folder in ("build/pkg", "build/pkg/node_modules", "buildx/node_modules"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.py").write_text("x = 1\n")
    settings = Settings(root=tmp_path)
    named = discover([tmp_path / "build"], settings)  # the user named it: checked
    assert [p.relative_to(tmp_path).as_posix() for p in named] == ["build/pkg/m.py"]
    assert discover([tmp_path / "buildx"], settings) == []  # its node_modules is excluded
    assert [p.relative_to(tmp_path).as_posix() for p in discover([tmp_path / "buildx" / "node_modules"], settings)] == [
        "buildx/node_modules/m.py"
    ]


def test_discovery_finds_files_in_the_order_of_their_paths_with_each_folders_settings(tmp_path):
    """Walked as text, not Paths: the same files, in Path order (`a/b.py` before
    `a.b/c.py`, though `/` sorts after `.` as text), each excluded by its own folder's
    config; a file that is not Python or not a file (a dangling link) is left out."""
    from precision_lint.discovery import discover
    from precision_lint.resolver import SettingsResolver

    for name in ("a/b.py", "a.b/c.py", "a-b.py", "a/notes.txt", "sub/keep.py", "sub/gen/skip.py", "sub/old.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.precision-lint]\nextend-exclude = ["gen/", "old.py"]\n')
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    found = discover([tmp_path], SettingsResolver(tmp_path))
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a/b.py", "a-b.py", "a.b/c.py", "sub/keep.py"]
    assert found == sorted(found)


def test_discovery_groups_each_settings_patterns_once_not_per_file(tmp_path, monkeypatch):
    from precision_lint import config
    from precision_lint.discovery import discover

    (tmp_path / "pkg").mkdir()
    for number in range(40):
        (tmp_path / "pkg" / f"m{number}.py").write_text("x = 1\n")
    calls = []
    real = config.grouped
    monkeypatch.setattr(config, "grouped", lambda patterns: calls.append(1) or real(patterns))
    assert len(discover([tmp_path], Settings(root=tmp_path))) == 40
    assert len(calls) == 1  # one settings, one folder named


# -- module summaries ------------------------------------------------------------------
def _old_line_of(source: str, name: str, owner: str | None) -> int | None:
    """The definition-line search as it was: one regex per function over the lines."""
    lines = source.splitlines()
    pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(")
    start = 0
    if owner is not None:
        cls = re.compile(rf"^\s*class\s+{re.escape(owner.rpartition('.')[2])}\b")
        start = next((i for i, text in enumerate(lines) if cls.match(text)), 0)
    for number in range(start, len(lines)):
        if pattern.match(lines[number]):
            return number + 1
    return None


def test_definition_lines_are_the_per_function_search():
    source = (
        "def f(x): pass\nclass A:\n    def f (self): pass\n    async def g(self):\n        def f(): pass\n"
        "class AB:\n    def h(self): pass\ndef h(): pass\nclass A2: pass\ndef   k  (a,\n  b): pass\nx = 'def q(): pass'\n"
        "\tdef tab(): pass\ndef ünï(): pass\n"
    )
    files = [source] + [p.read_text() for p in sorted((REPO / "precision_lint" / "model").glob("*.py"))]
    for text in files:
        lines = _DefinitionLines(text)
        names = set(re.findall(r"def\s+(\w+)", text)) | {"missing", "q"}
        owners = [None, "m.A", "m.AB", "m.A2", "m.Missing"] + [f"m.{c}" for c in re.findall(r"class\s+(\w+)", text)]
        for name in names:
            for owner in owners:
                assert lines.line_of(name, owner) == _old_line_of(text, name, owner), (name, owner)


# -- noqa --------------------------------------------------------------------------------
def test_a_file_without_a_noqa_comment_is_not_tokenized(monkeypatch):
    import tokenize

    def no_tokenizing(*args):
        raise AssertionError("tokenized")

    monkeypatch.setattr(tokenize, "generate_tokens", no_tokenizing)
    assert noqa_by_line("x = 'noqa'\ny = 1  # a comment\nNOQA = 2\n") == {}


def test_noqa_directives_are_still_read():
    directives = noqa_by_line("x = '# noqa'\ny = 1  # NoQA: PH001\n")
    assert list(directives) == [2] and directives[2].codes == ("PH001",)


def test_a_file_without_findings_whose_noqa_names_no_code_of_ours_is_not_tokenized(monkeypatch):
    import tokenize

    everything = frozenset(rule.code for rule in all_rules())
    source = "import torch\nx = torch.zeros(3)  # noqa: E501\ny = 1  # noqa\n"
    monkeypatch.setattr(tokenize, "generate_tokens", lambda *args: (_ for _ in ()).throw(AssertionError("tokenized")))
    assert check_source(source, "a.py", everything) == []


def test_an_unused_noqa_of_ours_is_still_reported_in_any_case():
    everything = frozenset(rule.code for rule in all_rules())
    found = check_source("import torch\nx = torch.zeros(3)  # noqa: ph001\n", "a.py", everything)
    assert [(d.code, d.location.row) for d in found] == [("PH100", 2)]


# -- garbage collection ------------------------------------------------------------------
def test_collection_is_paused_while_a_file_is_checked(tmp_path, monkeypatch):
    from precision_lint import runner

    seen = []
    real = runner._run_job
    monkeypatch.setattr(runner, "_run_job", lambda job: seen.append(gc.isenabled()) or real(job))
    target = tmp_path / "a.py"
    target.write_text(HAZARD)
    assert gc.isenabled()
    report = run_job(Job(str(target), PH001))
    assert seen == [False] and gc.isenabled()
    assert [d.code for d in report.diagnostics] == ["PH001"]


def test_collection_stays_off_where_it_was_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_project_analysis_pauses_collection_and_restores_it(tmp_path):
    (tmp_path / "train.py").write_text(HAZARD)
    collecting = []

    def runner(jobs, **options):
        collecting.append(gc.isenabled())
        return run_jobs(jobs, **options)

    codes = frozenset(rule.code for rule in all_rules())
    (report,) = run_project([Job(str(tmp_path / "train.py"), codes)], runner=runner)
    assert report.diagnostics
    assert collecting and not any(collecting)
    assert gc.isenabled()


def test_a_worker_started_while_the_analysis_pauses_collection_collects_in_its_own_process(tmp_path, monkeypatch):
    from precision_lint import runner

    # a pool started within the analysis (a run that reads the cache) forks a paused process
    monkeypatch.setattr(runner, "run_job", lambda job: runner.FileReport(f"{job.path}|{gc.isenabled()}", []))
    (tmp_path / "a.py").write_text(HAZARD)
    gc.disable()
    try:
        (report,) = run_jobs([Job(str(tmp_path / "a.py"), PH001)])
    finally:
        gc.enable()
    assert report.path == f"{tmp_path / 'a.py'}|True"


def test_a_file_checked_while_the_analysis_pauses_collection_is_collected_after():
    gc.disable()
    try:
        with collector_paused():
            cycle: list = []
            cycle.append(cycle)
            young = gc.get_count()[0]
        assert gc.get_count()[0] < young  # the youngest generation was collected
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("source", [STATEFUL, HAZARD, UNSAFE, STATEFUL.replace("torch.zeros(1)", "0")])
def test_a_checked_file_leaves_no_cycles_of_ours(source):
    """Collection is paused while a file is checked, so the trees and models must be
    freed by reference counting: a cycle would keep a whole tree until the next
    collection (and a collection per file costs more than it frees)."""
    from precision_lint.engine import check_module

    gc.collect()
    gc.disable()
    try:
        result = check_module(source, "m.py", frozenset({"PH001", "PH002", "PH003", "PH004", "PH005", "PH006"}))
        assert result.summary is not None
        del result
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        ours = [o for o in gc.garbage if type(o).__module__.startswith(("precision_lint", "libcst"))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert ours == []


# -- rule catalog --------------------------------------------------------------------------
def test_the_catalog_says_what_the_rule_classes_say():
    classes = all_rules()
    assert rule_codes() == tuple(r.code for r in classes)
    assert [(e.code, e.name, e.summary, e.fix_availability, e.default_severity, e.documentation()) for e in rule_entries()] == [
        (r.code, r.name, r.summary, r.fix_availability, r.default_severity, r.documentation()) for r in classes
    ]
    assert entry_by_code_or_name("ph001").name == entry_by_code_or_name("float-count-accumulator").name


def test_version_is_the_installed_one():
    from importlib.metadata import version

    import precision_lint

    assert precision_lint.__version__ == version("precision-lint")


# -- lazy imports ----------------------------------------------------------------------------
def _modules_after(argv: list[str], cwd: Path) -> set[str]:
    script = (
        "import io, contextlib, json, sys\nfrom precision_lint.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(%r)\n    except SystemExit:\n        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n" % (argv,)
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120)
    return set(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["rule", "PH001"], ["rule", "--all", "--output-format", "json"]])
def test_commands_that_check_nothing_do_not_import_libcst(tmp_path, argv):
    modules = _modules_after(argv, tmp_path)
    assert "libcst" not in modules
    if argv[0].startswith("--"):  # nothing of the tool but the parser of its arguments
        assert {m for m in modules if m.startswith("precision_lint")} <= {"precision_lint", "precision_lint.cli", "precision_lint.arguments", "precision_lint.suggest"}


def test_a_run_served_from_the_cache_does_not_import_libcst(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    (tmp_path / "b.py").write_text("import torch\nfrom a import acc\n")
    argv = ["check", ".", "--cache-dir", str(tmp_path / "cache")]
    cold = _modules_after(argv, tmp_path)
    assert "multiprocessing" in cold  # the first run checks the files, in workers
    # ... which import the checker as they start, while this process finds the files:
    # it never needs the checker itself
    assert not {"libcst", "precision_lint.engine", "precision_lint.fixer"} & cold
    warm = _modules_after(argv, tmp_path)
    assert "libcst" not in warm and "multiprocessing" not in warm  # the second starts no worker either
    # nor what only other paths need: a notebook, JUnit's XML, a cache write, a failure
    assert not {"tempfile", "traceback", "xml.etree", "precision_lint.notebook"} & warm
    # given files by name, as pre-commit gives them, it runs no git either
    named = _modules_after(["check", "a.py", "b.py", "--cache-dir", str(tmp_path / "cache")], tmp_path)
    assert "subprocess" not in named and "libcst" not in named


# -- long modules parsed in pieces -------------------------------------------------------
# Where libcst puts comments and blank lines between top-level statements (the footer of
# a block, the lines leading the next statement, the module's header and footer) is
# what the join must reproduce.
PIECE_SHAPES = [
    "# header\n\n# leads f\ndef f():\n    x = 1\n    # in f's block\n\n# leads g\n\n@d\n# between decorators\n@e\ndef g(): pass\n# module footer\n",
    "'''doc'''\nimport os\n\n\nclass A:\n    def m(self):\n        return 1\n        # deep\n    # method level\n# top\nx = 1; y = 2\nif x: pass\nelse:\n    y = 3\n",
    "try:\n    a = 1\nexcept E:  # why\n    pass\nfinally:\n    b = 2\n\n\n\nasync def h():\n    async with a as b:\n        await b\nwhile True:\n    break\nelse:\n    pass\n",
    "def f():\n  return 1\n\ndef g():\n  return 2\n# no trailing newline",
    "def f():\n\treturn 1\n\ndef g():\n\treturn 2\n\n\n\n",
    "import torch\r\nacc = torch.zeros(1)\r\nfor x in xs:\r\n    acc += (x == 0).sum()\r\n\r\n# end\r\n",
    "x = (1,\n     2)\ny = \\\n    3\nz = '''\nnot a statement\n'''\nmatch z:\n    case 1:\n        pass\n    case _:\n        pass\n",
    "\n\n\nx = 1\n\n\n    # an indented comment at the top level\ny = 2\n",
    "x = 1\r\n" * 5 + "y = 2\n" + "z = 3\r\n",  # mixed newlines, each piece starting with CRLF
    HAZARD,
    UNSAFE,
]


def _sources_for_pieces() -> list[str]:
    files = sorted((REPO / "tests" / "fixtures").rglob("*.py")) + sorted((REPO / "precision_lint").rglob("*.py"))
    return PIECE_SHAPES + [path.read_text(encoding="utf-8") for path in files]


@pytest.mark.parametrize("piece_lines", [1, 7])
def test_a_module_joined_from_pieces_is_the_whole_parse(piece_lines):
    from precision_lint.parsing import forget_starts, parse_in_pieces

    joined_some = 0
    for source in _sources_for_pieces():
        whole = cst.parse_module(source)
        joined = parse_in_pieces(source, piece_lines)
        forget_starts()
        if joined is None:
            continue
        joined_some += 1
        assert joined.deep_equals(whole), source[:200]
        assert (joined.default_indent, joined.default_newline, joined.has_trailing_newline) == (
            whole.default_indent, whole.default_newline, whole.has_trailing_newline
        )  # fmt: skip
    assert joined_some > 100


@pytest.mark.parametrize(
    "source",
    [
        "x = 1\n\x0cy = 2\n",  # a form feed
        "x = 1\ry = 2\r",  # lone carriage returns
        "x = 1\n",  # one statement: nothing to split
        "def f(:\n    pass\ny = 2\n",  # the standard parser refuses it
        "x = 1\n" * 5 + "def f():\n  return 1\n" + "y = 2\n" * 5 + "def g():\n    return 1\n",  # two indents
        "x = 1\n" * 3 + "y = 2\r\n" * 3,  # pieces that start with different newlines
    ],
)
def test_what_pieces_cannot_join_exactly_is_parsed_whole(source):
    from precision_lint.parsing import forget_starts, parse_in_pieces

    assert parse_in_pieces(source, 3) is None
    forget_starts()


def test_a_syntax_error_in_a_long_module_is_libcsts_own(monkeypatch):
    from precision_lint import parsing

    monkeypatch.setattr(parsing, "MIN_LINES", 10)
    source = "x = 1\n" * 20 + "y = (\n" + "z = 2\n" * 20
    with pytest.raises(cst.ParserSyntaxError) as ours:
        parsing.parse_module(source)
    with pytest.raises(cst.ParserSyntaxError) as theirs:
        cst.parse_module(source)
    assert str(ours.value) == str(theirs.value)


def test_long_modules_are_parsed_in_pieces_with_the_same_findings(monkeypatch):
    from precision_lint import parsing

    source = "import torch\n\n" + "def other(x):\n    return x * 2\n\n" * 300 + HAZARD + UNSAFE
    whole = check_source(source, "a.py", frozenset({"PH001", "PH002", "PH003", "PH004", "PH005", "PH006"}))
    calls = []
    real = parsing.parse_in_pieces
    monkeypatch.setattr(parsing, "parse_in_pieces", lambda *a: calls.append(a[1]) or real(*a))
    monkeypatch.setattr(parsing, "MIN_LINES", 100)
    monkeypatch.setattr(parsing, "PIECE_LINES", 50)
    pieces = check_source(source, "a.py", frozenset({"PH001", "PH002", "PH003", "PH004", "PH005", "PH006"}))
    assert calls == [50]
    assert [(d.code, d.location, d.end_location, d.message, d.fix) for d in pieces] == [
        (d.code, d.location, d.end_location, d.message, d.fix) for d in whole
    ]
    assert len(whole) == 2


def test_the_pieces_speedup_can_be_turned_off(monkeypatch):
    from precision_lint import parsing, speedups

    monkeypatch.setattr(parsing, "MIN_LINES", 1)
    monkeypatch.setattr(speedups, "_OFF", frozenset({"pieces"}))
    monkeypatch.setattr(parsing, "parse_in_pieces", lambda *a: pytest.fail("parsed in pieces"))
    assert parsing.parse_module(HAZARD).code == HAZARD


def test_fixes_in_a_long_module_are_the_same(tmp_path, monkeypatch):
    from precision_lint import parsing

    source = "import torch\n\n" + "def other(x):\n    return x * 2\n\n" * 300 + HAZARD
    whole = run_job(Job(str(_write(tmp_path / "whole.py", source)), PH001, mode="fix"))
    monkeypatch.setattr(parsing, "MIN_LINES", 100)
    monkeypatch.setattr(parsing, "PIECE_LINES", 50)
    pieces = run_job(Job(str(_write(tmp_path / "pieces.py", source)), PH001, mode="fix"))
    assert pieces.fixed_text == whole.fixed_text and "dtype=torch.int64" in (pieces.fixed_text or "")
    assert [(d.code, d.location) for d in pieces.fixed] == [(d.code, d.location) for d in whole.fixed]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(("lines", "workers"), [(10, 1), (4000, 2)])
def test_a_few_large_files_get_two_workers_and_small_ones_one(tmp_path, monkeypatch, lines, workers):
    from precision_lint import runner

    sizes: list[int] = []
    run = runner._Pool.run

    def counting(self, jobs, order, finish, size, known=()):
        sizes.append(size)
        run(self, jobs, order, finish, size, known)

    monkeypatch.setattr(runner._Pool, "run", counting)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 2)
    paths = []
    for number in range(3):
        path = tmp_path / f"m{number}.py"
        path.write_text("x = 1\n" * lines)
        paths.append(str(path))
    reports = runner.run_jobs([Job(path, PH001) for path in paths])
    assert [r.path for r in reports] == paths and not any(r.diagnostics for r in reports)
    assert sizes == [workers]
