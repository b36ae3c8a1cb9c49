"""The fault campaign in CI (issue 11, item 7): a bounded number of hypothesmith
programs with hazards spliced in, and mutants of the fixtures, through check and --fix.
benchmarks/fuzz.py runs the same checks for as long as you like."""
from __future__ import annotations

import random
import sys

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HAZARD, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import fuzz  # noqa: E402

BOUNDED = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@BOUNDED
@given(hypothesmith.from_grammar(), st.randoms(use_true_random=False))
def test_generated_programs_with_hazards_spliced_in(program, rng):
    verdict = fuzz.examine(fuzz.graft(program, rng))
    assert verdict.problems == []


@settings(max_examples=5, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node(), st.randoms(use_true_random=False))
def test_programs_from_libcst_nodes(program, rng):
    assert fuzz.examine(fuzz.graft(program, rng)).problems == []


CORPUS = fuzz.snippets()


@pytest.mark.parametrize("seed", range(40))
def test_mutants_of_the_fixtures_and_examples(seed):
    rng = random.Random(seed)
    program = fuzz.mutate(rng.choice(CORPUS), rng)
    assert fuzz.examine(program).problems == []


def test_the_checks_see_a_fix_that_cuts_code():
    # the independent ast check: a statement on an untouched line is gone
    before = "import torch\nx = 1\ny = 2\n"
    assert fuzz.ast_statements_changed(before, "import torch\nx = 1\n", [(2, 2)]) == "the Assign on line 3 changed though no edit touches it"
    assert fuzz.ast_statements_changed(before, "import torch\nx = 5\ny = 2\n", [(2, 2)]) is None


def test_a_clean_program_and_a_hazard_pass():
    assert fuzz.examine("x = 1\n").problems == []
    verdict = fuzz.examine(HAZARD)
    assert (verdict.problems, verdict.findings, verdict.fixed) == ([], 1, 1)
