"""The quick tree (precision_lint/quick_tree.py) is libcst's tree without its layout:
held node for node and field for field to libcst's parse, on every construct and on
generated programs, and the findings of a check are the same with and without it."""
from __future__ import annotations

import sys
import textwrap
import warnings

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import REPO

from precision_lint import speedups
from precision_lint.engine import check_module, check_source
from precision_lint.model.walk import walk
from precision_lint.quick_tree import quick_module
from precision_lint.registry import all_rules

sys.path.insert(0, str(REPO / "benchmarks"))
from same_tree import differences  # noqa: E402

CODES = frozenset(rule.code for rule in all_rules())

CONSTRUCTS = {
    "statements": """
        import os, a.b.c as d
        from . import x
        from ..pkg.mod import (y as z, w)
        from m import *
        x = y = 1; z += 2
        a: int = 3
        b: "list[int]"
        del a, b[0]
        del (c)
        global g
        assert x, "message"
        raise ValueError("v") from None
        raise
        pass
    """,
    "compound": """
        @decorator(1)
        @other.name
        async def f(a, /, b: int = 1, *args, c, d=2, **kwargs) -> "T":
            '''doc'''
            async with open(x) as (p, q), y:
                await z
            async for i in range(3):
                yield i
            yield from g()
            nonlocal_name = lambda u, *v, w=1, **k: u
            return
        def g(*, only): return only
        def h(a, b=1, /, c=2): pass
        class C(Base, *mixins, metaclass=Meta, **options):
            x: int
            def method(self): pass
        class D: pass
        if a:
            pass
        elif b:
            pass
        else:
            if c:
                pass
        if a: x = 1; y = 2
        else: z = 3
        for i, *rest in items:
            continue
        else:
            break
        while True:
            break
        else:
            pass
        try:
            pass
        except (A, B) as error:
            pass
        except C:
            pass
        else:
            pass
        finally:
            pass
        try: pass
        finally: pass
        with a, b as c: pass
    """,
    "expressions": """
        x = (a + b) * c ** -d // e % f @ g << h >> i | j & k ^ ~l
        y = not a and b or c and d and e
        z = a < b <= c == d != e > f >= g in h not in i is j is not k
        w = f(a, *b, c=1, **d)
        v = f(c=1, *b)
        u = f(x for x in y if x if not x)
        t = [x async for x in y] if p else {k: v for k, v in d.items()} or {s for s in t}
        s = {**a, "b": 1, **c}, {1, 2}, [*a, b], (), (1,), [], {}
        r = a[1], a[1:2], a[::3], a[1:2, ::3], a[1, 2], a[(1, 2)], a[(1), 2], a[()], a[x,]
        q = x if y else z
        p = (n := 10)
        o = 1_000 + 0x10 + 1e9 + 2j + 1.5 + True + False + None + ...
        n = "a" "b" f"c{d!r:>{width}}" 'e' u"h" r"\\"" '''i"''' \"\"\"j'\"\"\"
        n2 = b"f" rb'g', b"h", rb'\\'', f"{x}"
        m = f"{x=}" + f"{'nested'}"
        l = ("multi"
             "line")
        k = lambda: (yield)
        j = a.b.c(d)[e].f
        i = -1, +2, ~3
        h = "\\\\"
    """,
    "f-strings": """
        a = f"text {x} {y!r} {z:>10} {w!s:.3f} {{braces}} {v}}}" + F'{d["k"]}' + rf"\\d{x}\\n"
        b = f\'\'\'{ (x) } and { x + 1 !a}\'\'\', f"", f"{x:}", f"{f(a, *b, c=1)[0].g}", f"{a if b else c}"
        c = f"{x=}", f"{x = }", f"{x:{width}}", f"{x!r:>{w}.{p}f}", f"{x, y}", f"{{{x, y}", f"{(i for i in y)}"
        d = f"{f'{x}'}", f"é{x}", f"a" "b{c}", f"{x}" f"{y}", (f"multi {x}"
             f"line {y}"), f\"\"\"{x}
        {y}\"\"\"
        e = f"{ {'k': 1}['k'] }", f"{(lambda: 1)()}", f"{(n := 3)}", f"{a != b}", f"{x:%Y-%m-%d %H}"
    """,
    "concatenations": """
        a = ("one"  # a comment's quote
             "two" \\
             'three'), b"x" rb"y", u"a" "b", "é" "ü", \'\'\'x\'\'\' \"\"\"y\"\"\"
        b = (f"a{x}"
             "b" f"{y!r:>3}"), f"a" f"b{c}" f"{d}e", f"{x}" "{y}"
        c = (f"é{x}"
             "b"), (f\"\"\"a
        {x}\"\"\" "b"), ("a" f"{x=}")
    """,
    "unicode": """
        naïve = "çà"; other = f(naïve, "日本語")
        x = {"ключ": naïve}["ключ"]
    """,
    "semicolons": "a = 1; b = 2;\nc = 3\nif x: d = 4; e = 5\n",
    "crlf": "import torch\r\nx = torch.zeros(3)\r\nif x:\r\n    y = 1\r\n",
}


if sys.version_info >= (3, 11):
    CONSTRUCTS["except-star"] = "try:\n    pass\nexcept* ValueError:\n    pass\n"


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_the_quick_tree_has_libcsts_shape(name):
    source = textwrap.dedent(CONSTRUCTS[name]).lstrip("\n")
    quick = quick_module(source)
    assert quick is not None
    assert differences(quick.module, cst.parse_module(source)) == []


def test_strings_are_built_here(monkeypatch):
    # an f-string's fields' expressions come from the standard tree, and implicit
    # concatenations are split on the source; libcst parses only the shapes whose
    # source the standard tree does not place (`{x=}`, nested fields, lines)
    parsed = []
    original = cst.parse_expression
    monkeypatch.setattr(cst, "parse_expression", lambda code: parsed.append(code) or original(code))
    source = (
        'a = f"t {x} {y!r:>3} {{b}}" + rf"\\d{z.w(1)}"\nb = f"{x=}", f"{x:{w}}", f"{x, y}", f"é{x}"\n'
        'c = ("one"  # note\n     "two" f"{x}"), f"""{y}\n"""\n'
    )
    quick = quick_module(source)
    assert differences(quick.module, cst.parse_module(source)) == []
    assert parsed == ['(f"{x=}")', '(f"{x:{w}}")', '(f"{x, y}")', '(f"é{x}")', '(f"""{y}\n""")']


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    match x:\n        case 1:\n            s = \"\"\"a\n  b\"\"\"\n",  # a `match` whose string spans lines
        "def f(x):\n    match x:\n        case 1:\n            y = [\n  2]\n",  # a `match` line indented less
        "x = 1\ry = 2\n",  # a lone carriage return
        "if x: \\\n    pass\n",  # a suite after a line continuation
        "x = a[*b]\n",  # a starred subscript
        "def f(:\n",  # the standard parser refuses it
    ],
)
def test_what_the_quick_tree_cannot_read_is_left_to_libcst(source):
    assert quick_module(source) is None


def test_a_match_statement_is_libcsts_own():
    source = textwrap.dedent(
        """\
        import torch
        def route(kind, counts):
            total = torch.zeros(4)
            match kind:  # a comment
                case "sum" | "add":
                    total += counts.float().sum()
                case [first, *rest] if rest:
                    total = first
                case {"k": value, **others}:
                    pass
                case Point(x=0, y=yy):
                    def inner():
                        return yy

                case _:
                    total = self.totals.get(kind)
            return total
        match 1:
            case 1: pass
        """
    )
    quick = quick_module(source)
    assert quick is not None
    assert differences(quick.module, cst.parse_module(source)) == []
    route = quick.module.body[1]
    assert ("self", "totals") in quick.attributes_named(route)


def test_the_comparison_sees_a_difference():
    # the check cannot pass by comparing nothing
    real = cst.parse_module("x = f(a, b)\n")
    assert differences(cst.parse_module("x = f(a, c)\n"), real) == ["module.body[0].body[0].value.args[1].value.value: 'c' against libcst's 'b'"]
    assert differences(cst.parse_module("x = f(a)\n"), real)
    assert differences(cst.parse_module("x = f(a, b)  # layout only\n"), real) == []


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_programs_have_libcsts_shape(program):
    try:
        real = cst.parse_module(program)
    except Exception:
        return  # libcst refuses it: the engine reports it as a syntax error
    quick = quick_module(program)
    if quick is not None:
        assert differences(quick.module, real) == []


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_programs_from_libcst_nodes_have_libcsts_shape(program):
    quick = quick_module(program)
    if quick is not None:
        assert differences(quick.module, cst.parse_module(program)) == []


_TEXT = ["a", " ", "{{", "}}", "\\\\", "\\n", "'", '"', "#", "(", ")", ":", "!", "=", "é", '\\"', "\\'"]
_FIELDS = ["x", "a.b", "f(1)", 'd["k"]', "d['k']", "(x)", " x ", "x + 1", "x, y", "(i for i in y)", "x=", "f'{y}'"]
_SPECS = ["", ":>10", ":.3f", ":", ":{w}", "!r", "!s:>3"]


@st.composite
def _string_literal(draw):
    prefix = draw(st.sampled_from(["", "f", "r", "rf", "F", "b", "rb", "u"]))
    quote = draw(st.sampled_from(['"', "'", '"""', "'''"]))
    formatted = "f" in prefix.lower()
    parts = draw(st.lists(
        st.one_of(st.sampled_from(_TEXT), st.tuples(st.sampled_from(_FIELDS), st.sampled_from(_SPECS)))
        if formatted else st.sampled_from(_TEXT), max_size=4,
    ))  # fmt: skip
    text = "".join("{" + part[0] + part[1] + "}" if isinstance(part, tuple) else part for part in parts)
    return prefix + quote + (text.replace("é", "e") if "b" in prefix else text) + quote


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(_string_literal(), st.sampled_from([" ", "", "\n    ", " # it's \"q\"\n  ", " \\\n  "])), min_size=1, max_size=4))
def test_strings_and_their_concatenations_have_libcsts_shape(pieces):
    last = len(pieces) - 1
    program = "v = (" + "".join(literal + (between if k < last else "") for k, (literal, between) in enumerate(pieces)) + ")\n"
    try:
        real = cst.parse_module(program)
        compile(program, "<strings>", "exec")
    except Exception:
        real = None  # not a program (a quote that ends its string early, a field Python refuses)
    assume(real is not None)
    quick = quick_module(program)
    assert quick is not None
    assert differences(quick.module, real) == []


def test_the_call_code_is_libcsts():
    source = (
        "import torch\nmodel = build()\nmodel.half()\nwrap(model.bfloat16())\ny = (model.half())\n"
        "z = model.to(\n    torch.bfloat16)\nwrap((model.float()))\n(\n    model.double())\n"
        'log(f"{model.half()} {(model.float())}")\n'
    )
    quick = quick_module(source)
    codes = [quick.code_of_call(node) for node in walk(quick.module) if isinstance(node, cst.Call)]
    assert codes == [
        "build()",
        "model.half()",
        "wrap(model.bfloat16())",
        "model.bfloat16()",  # the call's own parenthesis is the only one before it
        "(model.half())",  # in parentheses of its own, which libcst's code of the call holds
        "model.to(\n    torch.bfloat16)",
        "wrap((model.float()))",
        None,  # `wrap((`: which pair is the call's own is not read
        "(\n    model.double())",  # its own, across lines
        'log(f"{model.half()} {(model.float())}")',
        "model.half()",  # in an f-string's field
        "(model.float())",  # in parentheses of its own
    ]


def _call_codes(source: str) -> list[tuple[str | None, str]]:
    """(the quick tree's code of each call, libcst's), in the trees' order."""
    quick, real = quick_module(source), cst.parse_module(source)
    assert quick is not None
    quick_calls = [node for node in walk(quick.module) if isinstance(node, cst.Call)]
    real_calls = [node for node in walk(real) if isinstance(node, cst.Call)]
    assert len(quick_calls) == len(real_calls)
    return [(quick.code_of_call(q), real.code_for_node(r)) for q, r in zip(quick_calls, real_calls)]


def _joined(code: str) -> str:
    return " ".join(code.split())  # evidence reads the code so (see code_of_call)


def test_the_call_code_across_lines_is_libcsts():
    source = textwrap.dedent(
        """\
        optimizer = build(
            inner,
            Config(lr=1, bf16=True),
        )
        optimizer = build(  # a comment (with a parenthesis
            Config(
                bf16=True,
            ),
        )
        model = (
            AutoModel.load(name, torch_dtype=torch.bfloat16)
            .eval()
        )
        baseline = (
            Native(
                config,
            )
        )
        wrapped = wrap(
            # a comment
            (model.half())
        )
        text = "a # b (" , (
            model.half())
        joined = build(inner, \\
            Config(lr=2))
        class Layer(
            base(1)
        ):
            pass
        with (
            opened(path)
        ):
            pass
        """
    )
    codes = _call_codes(source)
    assert codes[1] == ("Config(lr=1, bf16=True)", "Config(lr=1, bf16=True)")  # after `inner,`
    assert codes[3][0] is not None  # the first argument, its call's `(` a line up
    assert codes[4][0] is not None and codes[4][0].startswith("(")  # the chain, in parentheses of its own
    assert codes[5][0] is not None  # `.eval()` follows: its parentheses are the chain's
    assert codes[6][0] is not None and codes[6][0].startswith("(")  # `Native(...)` in its own
    assert codes[8][0] is None  # `wrap(` and `(` around it: which pair is its own is not read
    assert codes[9][0] is None  # after a quote, where a `#` may start no comment
    assert codes[11][0] is not None  # after a line continuation
    assert codes[12][0] is None and codes[13][0] is None  # in the statement's parentheses
    for quick, real in codes:
        assert quick is None or _joined(quick) == _joined(real)


def test_the_call_code_in_a_statements_parentheses_is_libcsts():
    """libcst gives `except (E()):`'s and `with (f()) as x:`'s parentheses to the call,
    and `with (f()):`'s to the statement, where the quick tree leaves it to libcst."""
    source = textwrap.dedent(
        """\
        try:
            pass
        except (Failure()):
            pass
        with (opened(path)) as stream, (locked()):
            pass
        with (opened(path) as stream):
            pass
        with (opened(path)):
            pass
        """
    )
    codes = _call_codes(source)
    assert [quick for quick, _ in codes] == ["(Failure())", "(opened(path))", "(locked())", "opened(path)", None]
    assert all(quick is None or quick == real for quick, real in codes)


def test_the_call_code_is_libcsts_wherever_it_is_read():
    """Every call in the fixtures whose code the quick tree reads is libcst's."""
    read = 0
    for path in _fixture_sources():
        source = path.read_text(encoding="utf-8")
        if quick_module(source) is None:
            continue
        for quick, real in _call_codes(source):
            if quick is not None:
                read += 1
                assert _joined(quick) == _joined(real), path
    assert read > 500


def _switched(monkeypatch, on: bool):
    monkeypatch.setattr(speedups, "_OFF", frozenset() if on else frozenset({"quick"}))


def _fixture_sources():
    return [path for path in sorted((REPO / "tests" / "fixtures").rglob("*.py")) if path.stat().st_size < 200_000]


def test_findings_are_the_same_without_the_quick_tree(monkeypatch):
    paths = _fixture_sources()
    assert len(paths) > 50
    with_findings = 0
    for path in paths:
        source = path.read_text(encoding="utf-8", errors="replace")
        _switched(monkeypatch, True)
        quick = check_source(source, str(path), CODES)
        _switched(monkeypatch, False)
        concrete = check_source(source, str(path), CODES)
        assert quick == concrete, path
        with_findings += bool(concrete)
    assert with_findings > 20  # the comparison covers files that report something


def test_evidence_read_on_the_quick_tree_is_libcsts(monkeypatch):
    source = "import torch\nmodel = Net()\nmodel.half()\nscaler = torch.cuda.amp.GradScaler(\n    init_scale=2.0)\n"
    results = []
    for on in (True, False):
        _switched(monkeypatch, on)
        results.append(check_module(source, "pkg/train.py", CODES, summary_only=True).summary)
    assert results[0]["evidence"], "the module shows evidence"
    assert results[0] == results[1]


def test_identifiers_keep_their_spelling():
    # the standard parser reads `AĲ` as `AIJ`; libcst keeps what is written
    for source in ("globalmatch, AĲ\n", "x.AĲ = 1\n", "def ﬁnd(): pass\n", "import ﬁle\n"):
        assert quick_module(source) is None, source
    # text that is not NFKC-normalized outside the names changes nothing
    source = "x = '，Ĳ'  # ﬁ\nnaïve = x\n"
    assert differences(quick_module(source).module, cst.parse_module(source)) == []


def test_reading_the_code_prints_no_warning():
    # Python 3.12 warns of an invalid escape when it parses one; the user's code is not ours to warn about
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert quick_module('import torch\npattern = "\\d+"\nsame = x is 1\n') is not None
    assert caught == []


def test_exact_type_checks_name_classes_without_subclasses():
    # the model tests `type(node) is cst.Name` (isinstance on libcst's ABCs is slow),
    # which is isinstance only for a class nothing derives from
    import re

    named = set()
    for path in [*(REPO / "precision_lint" / "model").glob("*.py"), *(REPO / "rules").glob("*.py")]:
        for test in re.findall(r"type\([^)]*\) (?:is not|is|not in|in) \(?((?:cst\.\w+(?:, )?)+)", path.read_text()):
            named.update(re.findall(r"cst\.(\w+)", test))
    assert len(named) > 30
    assert [name for name in sorted(named) if getattr(cst, name).__subclasses__()] == []


def test_a_file_checked_again_with_findings_goes_to_libcst_at_once(tmp_path, monkeypatch):
    from precision_lint.project.analysis import run_project
    from precision_lint.runner import Job, run_jobs

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("def count(x):\n    return (x > 0).sum()\n")
    (package / "user.py").write_text(
        "import torch\nfrom pkg.helper import count\n\n\ndef f(x):\n"
        "    total = torch.zeros(1)\n    total += (x > 0).sum()\n"  # found in the first round
        "    other = torch.zeros(1)\n    other += count(x)\n"  # found once the helper's summary is known
        "    return total, other\n"
    )
    monkeypatch.chdir(tmp_path)
    # in import order the helper's summary is known at once and nothing is checked
    # again (tests/test_import_order.py); without it, user.py is
    monkeypatch.setattr(speedups, "_OFF", frozenset({"ordered"}))
    batches = []

    def runner(jobs, **options):
        batches.append([(job.path, job.concrete) for job in jobs])
        return run_jobs(jobs, **options)

    jobs = [Job(path, CODES) for path in ("pkg/__init__.py", "pkg/helper.py", "pkg/user.py")]
    (_, _, user) = run_project(jobs, runner=runner)
    assert sorted(d.location.row for d in user.diagnostics) == [6, 8]
    assert all(not concrete for _, concrete in batches[0])
    assert ("pkg/user.py", True) in batches[-1]  # checked again, with a finding from before


def test_a_changed_file_whose_last_version_had_findings_goes_to_libcst_at_once(tmp_path, monkeypatch):
    from precision_lint.cache import ResultCache
    from precision_lint.project.analysis import run_project
    from precision_lint.runner import Job, run_jobs

    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("import torch\n\ndef f(x):\n    total = torch.zeros(1)\n    total += (x > 0).sum()\n    return total\n")
    (tmp_path / "clean.py").write_text("import torch\n\ndef g(x):\n    return x + 1\n")
    seen = []

    def runner(jobs, **options):
        seen.extend((job.path, job.concrete) for job in jobs)
        return run_jobs(jobs, **options)

    def check():
        cache = ResultCache(tmp_path / "cache")
        return run_project([Job("train.py", CODES), Job("clean.py", CODES)], cache, runner)

    first = check()
    assert [len(report.diagnostics) for report in first] == [1, 0]
    assert seen == [("train.py", False), ("clean.py", False)]
    seen.clear()
    for name in ("train.py", "clean.py"):  # both edited since
        (tmp_path / name).write_text((tmp_path / name).read_text() + "# edited\n")
    second = check()
    assert [len(report.diagnostics) for report in second] == [1, 0]
    assert seen == [("train.py", True), ("clean.py", False)]
