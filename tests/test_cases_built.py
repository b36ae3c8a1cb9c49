"""benchmarks/cases/cases/ is built from the definitions in benchmarks/cases/_author/
(the folders are what readers and score.py read; the definitions are what is edited):
the two must not drift apart."""
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"


def _files(root: Path) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): path.read_text() for path in sorted(root.rglob("*")) if path.is_file()}


def test_the_committed_cases_are_what_the_definitions_build(tmp_path):
    built = tmp_path / "cases"
    result = subprocess.run([sys.executable, str(CASES / "_author" / "build.py"), str(built)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    committed = {name: text for name, text in _files(CASES / "cases").items() if "__pycache__" not in name}
    assert _files(built) == committed
