"""When the int64 fix needs a name for torch, the imports stay sorted as isort and
Ruff's `I` rules want them: checked with `ruff check --select I` on the fixed files,
which hold standard-library, third-party and local imports."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

LOOP = "acc = {call}\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"

CASES = {
    # (source, a line the fixed file must hold)
    "adds_to_from_import": (
        "import os\nimport re\n\nfrom torch import zeros\n\n" + LOOP.format(call="zeros(1)"),
        "from torch import int64, zeros\n",
    ),
    "from_import_with_third_and_first_party": (
        "import os\n\nimport numpy as np\nfrom torch import Tensor, zeros\n\nfrom mypkg import helper\n\n"
        + LOOP.format(call="zeros(1)"),
        "from torch import Tensor, int64, zeros\n",
    ),
    "exploded_from_import": (
        "from __future__ import annotations\n\nimport os\n\nfrom torch import (\n    ones,\n    zeros,\n)\n\n"
        + LOOP.format(call="zeros(1)"),
        "    int64,\n    ones,\n",
    ),
    # the fault campaign: one member on its line, kept there by its trailing comma
    "exploded_from_import_of_one_member": (
        "from torch import (\n    zeros,\n)\n\n" + LOOP.format(call="zeros(1)"),
        "from torch import (\n    int64,\n    zeros,\n)\n",
    ),
    "exploded_from_import_of_one_member_with_a_comment": (
        "from torch import (\n    zeros,  # keep\n)\n\n" + LOOP.format(call="zeros(1)"),
        "    int64,\n    zeros,  # keep\n",
    ),
    # the review: a comment after the parenthesis or on the last member stays on its line
    "exploded_from_import_with_a_comment_after_the_parenthesis": (
        "from torch import (  # dtypes we use\n    zeros,\n)\n\n" + LOOP.format(call="zeros(1)"),
        "from torch import (  # dtypes we use\n    int64,\n    zeros,\n)\n",
    ),
    "exploded_from_import_gains_its_last_member_below_a_comment": (
        "from torch import (\n    Tensor,  # type hints\n)\nfrom torch import zeros as z\n\n" + LOOP.format(call="z(1)"),
        "from torch import (\n    Tensor,  # type hints\n    int64,\n)\n",
    ),
    "aliased_from_import_gets_import_torch_in_third_party": (
        "import os\nimport re\n\nimport numpy as np\nfrom torch import zeros as z\n\nfrom mypkg import helper\n\nfrom . import sibling\n\n"
        + LOOP.format(call="z(1)"),
        "import numpy as np\nimport torch\nfrom torch import zeros as z\n",
    ),
    "new_third_party_section_between_stdlib_and_first_party": (
        '"""Doc."""\nimport os\n\nfrom mypkg import helper\n\n\ndef f(xs):\n    import torch\n\n'
        "    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    print(acc.item())\n",
        "import os\n\nimport torch\n\nfrom mypkg import helper\n",
    ),
    "new_section_before_first_party_only": (
        "from mypkg import helper\n\nfrom . import sibling\n\n\ndef f(xs):\n    import torch\n\n"
        "    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    print(acc.item())\n",
        "import torch\n\nfrom mypkg import helper\n",
    ),
    "existing_alias_is_reused": (
        "import os\n\nimport torch as th\n\n" + LOOP.format(call="th.zeros(1)"),
        "acc = th.zeros(1, dtype=th.int64)\n",
    ),
}


def ruff_isort(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "I", str(path.name)],
        cwd=path.parent, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_imports_stay_sorted(tmp_path, name):
    source, expected = CASES[name]
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    target = tmp_path / "train.py"
    target.write_text(source)
    before = ruff_isort(target)
    assert before.returncode == 0, f"the fixture itself must be sorted: {before.stdout}"
    result = run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = target.read_text()
    assert "int64" in fixed and expected in fixed, fixed
    after = ruff_isort(target)
    assert after.returncode == 0, f"{fixed}\n{after.stdout}"
    # and the fix holds: nothing left to report
    again = run_cli("check", "--no-cache", "train.py", cwd=tmp_path)
    assert again.returncode == 0, again.stdout


def test_int64_bound_to_something_else_is_not_shadowed(tmp_path):
    # `int64` already means numpy's here: the fix must not import torch's under that name
    source = "from numpy import int64\nfrom torch import zeros\n\n" + LOOP.format(call="zeros(1)")
    target = tmp_path / "train.py"
    target.write_text(source)
    result = run_cli("check", "--no-cache", "--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = target.read_text()
    assert "from torch import zeros\n" in fixed and "import torch\n" in fixed
    assert "dtype=torch.int64" in fixed
    assert ruff_isort(target).returncode == 0, fixed


def test_crlf_file_keeps_its_newlines(tmp_path):
    source = "import os\r\n\r\nimport numpy as np\r\nfrom torch import zeros as z\r\n\r\n" + LOOP.format(call="z(1)").replace("\n", "\r\n")
    target = tmp_path / "train.py"
    target.write_bytes(source.encode())
    result = run_cli("check", "--no-cache", "--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = target.read_bytes().decode()
    assert "import numpy as np\r\nimport torch\r\nfrom torch import zeros as z\r\n" in fixed
    assert "\n" not in fixed.replace("\r\n", "")
