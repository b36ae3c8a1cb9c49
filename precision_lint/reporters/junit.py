"""`--output-format junit`: JUnit XML, shaped like Ruff's, for CI systems that show
test reports (GitLab `artifacts:reports:junit`, Jenkins, Azure Pipelines).

One <testsuite> per file with findings (a clean file is not listed: the reporter
only sees diagnostics) and one failed <testcase> per finding:

    <testsuites name="precision-lint" tests="2" failures="2" errors="0">
      <testsuite name="src/train.py" tests="2" failures="2" errors="0" skipped="0">
        <testcase name="PH001" classname="src/train.py" file="src/train.py" line="5">
          <failure message="...">5:11: ...</failure>
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from ..diagnostics import Diagnostic
from .github import relative_path

# Characters XML 1.0 cannot hold at all, escaped or not; ElementTree writes them
# through, which would make the report unparseable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def report(diagnostics: list[Diagnostic], root: Path) -> ET.Element:
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_file.setdefault(relative_path(diagnostic.filename, root), []).append(diagnostic)
    count = str(len(diagnostics))
    suites = ET.Element("testsuites", name="precision-lint", tests=count, failures=count, errors="0")
    for path, found in sorted(by_file.items()):
        found = sorted(found, key=lambda d: (d.location, d.code or ""))
        n = str(len(found))
        suite = ET.SubElement(suites, "testsuite", name=_text(path), tests=n, failures=n, errors="0", skipped="0")
        for d in found:
            case = ET.SubElement(
                suite,
                "testcase",
                name=d.code or "syntax-error",
                classname=_text(path),
                file=_text(path),
                line=str(d.location.row),
            )
            failure = ET.SubElement(case, "failure", message=_text(d.message))
            failure.text = _text(f"{d.location.row}:{d.location.column}: {d.message}")
    return suites


def write(diagnostics: list[Diagnostic], out: TextIO, root: Path) -> None:
    tree = report(diagnostics, root)
    ET.indent(tree, space="  ")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(tree, encoding="unicode"))
    out.write("\n")
