"""benchmarks/ecosystem/score.py places each finding in its tree, or refuses to score."""
from __future__ import annotations

import importlib.util
import json

import pytest

from conftest import REPO

# loaded by its path under a name of its own: benchmarks/cases/ has a score.py too, and
# a bare `import score` would get whichever of the two was imported first
_SPEC = importlib.util.spec_from_file_location("ecosystem_score", REPO / "benchmarks" / "ecosystem" / "score.py")
score = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(score)


def _finding(filename: str, row: int) -> dict:
    return {"code": "PH001", "filename": filename, "location": {"row": row}, "message": "m"}


def test_findings_are_placed_from_the_tree_root(tmp_path):
    tree = tmp_path / "trees" / "demo"
    (tree / "pkg").mkdir(parents=True)
    out = tmp_path / "out"
    out.mkdir()
    (out / "demo.json").write_text(json.dumps([_finding(str(tree / "pkg" / "m.py"), 3), _finding("pkg/n.py", 4)]))
    found = score.load_findings(out, tmp_path / "trees")
    assert [(row["path"], row["line"]) for row in found["demo"]] == [("pkg/m.py", 3), ("pkg/n.py", 4)]


def test_a_tree_checked_under_a_linked_name_is_placed(tmp_path):
    real = tmp_path / "trees" / "owner+demo"
    real.mkdir(parents=True)
    (tmp_path / "trees" / "demo").symlink_to(real)
    out = tmp_path / "out"
    out.mkdir()
    (out / "demo.json").write_text(json.dumps([_finding(str(real / "a.py"), 1)]))
    assert score.load_findings(out, tmp_path / "trees")["demo"][0]["path"] == "a.py"


def test_a_finding_outside_its_tree_stops_the_score(tmp_path):
    (tmp_path / "trees" / "owner+demo").mkdir(parents=True)
    out = tmp_path / "out"
    out.mkdir()
    (out / "demo.json").write_text(json.dumps([_finding(str(tmp_path / "trees" / "owner+demo" / "a.py"), 1)]))
    with pytest.raises(SystemExit, match=r"owner\+demo/a.py is not in .*trees/demo: no label or verdict of demo"):
        score.load_findings(out, tmp_path / "trees")
