"""The fault campaign, kept: generated and mutated programs through check and --fix.

    python benchmarks/fuzz.py --programs 20000 --jobs 2 --out fuzz-out

Programs come from hypothesmith (its grammar strategy, and a share from its CST-node
strategy) with hazard snippets spliced in, so the model and the fixes run on them and
not only the parser, and from a mutation fuzzer over tests/fixtures and the rules'
examples. Every program is checked and fixed (unsafe fixes included, every rule on) and
must show:

- no crash: no exception, no internal-error diagnostic, no dead worker;
- fixes that re-parse (libcst), and compile when the program compiled;
- fixes that converge: fixing the fixed program changes nothing;
- fixes that change nothing outside their edits: the fix guard refused none, and an
  independent check with Python's own `ast` agrees (every statement on a line no edit
  touches is still there, the same, in the same order).

Failing programs are saved under --out with what they broke. Each job is a child
process that generates and examines on its own; one that dies (a native crash) is
counted as a crash, its program saved, and it is restarted. Not a test: tests/
test_fuzz.py runs a bounded number of examples of the same checks in CI.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from precision_lint.deep_stack import call_with_deep_stack  # noqa: E402
from precision_lint.engine import check_source, needs_parse  # noqa: E402
from precision_lint.failures import FAILURE_CODES  # noqa: E402
from precision_lint.fixer import fix_source, plan_fixes  # noqa: E402
from precision_lint.limits import InputLimits, check_limits  # noqa: E402
from precision_lint.registry import all_rules  # noqa: E402
from precision_lint.source import LineIndex, splice, split_lines_keeping_ends  # noqa: E402

ALL_CODES = frozenset(rule.code for rule in all_rules())
LIMITS = InputLimits()

# Hazard templates: {E} takes an expression from a generated program.
TEMPLATES = [
    "import torch\nacc = torch.zeros(1)\nfor x in {E}:\n    acc += (x == 0).sum()\nprint(acc.item())\n",
    "import torch\nacc = torch.zeros({E})\nfor g in gs:\n    acc += g.numel()\n",
    "import torch\ndef f(xs):\n    n = torch.zeros(1)\n    for x in xs:\n        n += ({E} == 0).sum()\n    return n\n",
    "import torch\nn = torch.tensor(0.0)\nn += torch.count_nonzero({E})\nprint(n)\n",
    "import torch\nh = torch.histc({E}, bins=10)\n",
    "import torch\npos = torch.arange({E}).half()\n",
    "import torch\ntotal = 0.0\nfor b in {E}:\n    total += len(b)\nt = torch.tensor(total)\n",
    "import torch\nimport torch.distributed as dist\nc = torch.zeros(1)\nc += ({E}).sum()\ndist.all_reduce(c)\n",
    "import torch\nbuf = {E}\nbuf.scatter_add_(0, idx, torch.ones(3))\n",
    "from torch import zeros as z\nacc = z(1)\nfor g in {E}:\n    acc += (g > 0).sum()  # noqa: PH001\n",
]
_IDENTIFIER = re.compile(r"\b(xs|gs|idx|batch|labels|mask)\b")


def snippets() -> list[str]:
    """The rules' examples and the fixtures: real hazards with fixes."""
    found = [text for rule in all_rules() for text in [*rule.VALID, *(case.code for case in rule.INVALID)]]
    found += [path.read_text(encoding="utf-8") for path in sorted((REPO / "tests" / "fixtures").rglob("*.py"))]
    return found


# -- examining one program -----------------------------------------------------------
@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    parsed: bool = False
    findings: int = 0
    fixed: int = 0
    limit: bool = False


def examine(source: str) -> Verdict:
    """Check and fix `source`; what went wrong, if anything. Runs on a deep stack, as
    the workers of the real run do."""
    return call_with_deep_stack(_examine, source)


def _examine(source: str) -> Verdict:
    verdict = Verdict()
    if needs_parse(source, ALL_CODES) and check_limits(source, len(source.encode("utf-8", "surrogatepass")), "p.py", LIMITS):
        verdict.limit = True
        return verdict
    try:
        found = check_source(source, "p.py", ALL_CODES)
        outcome = fix_source(source, "p.py", ALL_CODES, unsafe=True)
    except Exception as error:  # noqa: BLE001 - counting them is the point
        verdict.problems.append(f"crash: {type(error).__name__}: {error}")
        return verdict
    verdict.parsed = not any(d.code is None for d in found)
    verdict.findings = sum(1 for d in found if d.code and d.code not in FAILURE_CODES)
    verdict.fixed = len(outcome.fixed)
    for diagnostic in [*found, *outcome.remaining]:
        if diagnostic.code in FAILURE_CODES:
            kind = "outside-edits" if "outside its edits" in diagnostic.message else (
                "unparseable-fix" if "does not parse" in diagnostic.message else (
                    "not-converged" if "did not converge" in diagnostic.message else "crash"))  # fmt: skip
            verdict.problems.append(f"{kind}: {diagnostic.message}")
    if outcome.source == source:
        return verdict
    verdict.problems += _fixed_problems(source, outcome)
    return verdict


def _fixed_problems(source: str, outcome) -> list[str]:
    import libcst as cst

    problems = []
    try:
        cst.parse_module(outcome.source)
    except cst.ParserSyntaxError as error:
        return [f"unparseable-fix: libcst: {error.message}"]
    if _compiles(source) and not _compiles(outcome.source):
        problems.append("unparseable-fix: Python no longer compiles it")
    again = fix_source(outcome.source, "p.py", ALL_CODES, unsafe=True)
    if again.source != outcome.source:
        problems.append("not-converged: a second --fix changed the fixed program")
    if all(d in outcome.initial for d in outcome.fixed):  # one round: edits are in the source's terms
        pieces, _ = plan_fixes(source, [d.fix for d in outcome.fixed])
        if splice(source, pieces) != outcome.source:
            problems.append("outside-edits: the fixed text is not the source with the fixes' edits")
        elif _compiles(source):
            index = LineIndex(source)
            rows = [(index.row_of(start), index.row_of(max(start, end - 1))) for start, end, _ in pieces]
            problem = ast_statements_changed(source, outcome.source, rows)
            if problem:
                problems.append(f"outside-edits (ast): {problem}")
    return problems


def _compiles(source: str) -> bool:
    try:
        compile(source, "p.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def ast_statements_changed(before: str, after: str, edited_rows: list[tuple[int, int]]) -> str | None:
    """The guard's question asked of Python's own parser: every statement of `before`
    on lines no edit touches is in `after`, the same and in the same order; only
    imports are new."""
    old, new = _flat(ast.parse(before)), _flat(ast.parse(after))
    position = 0
    for kind, depth, first, last, dump in old:
        touched = any(first <= high and low <= last for low, high in edited_rows)

        def same(other) -> bool:
            return other[0] == kind and other[1] == depth and (touched or other[4] == dump)

        while position < len(new) and not same(new[position]) and new[position][0] in ("Import", "ImportFrom"):
            position += 1
        if position == len(new) or not same(new[position]):
            return f"the {kind} on line {first} changed" + ("" if touched else " though no edit touches it")
        position += 1
    extra = [item for item in new[position:] if item[0] not in ("Import", "ImportFrom")]
    return f"a new {extra[0][0]} statement" if extra else None


def _flat(tree: ast.Module) -> list[tuple[str, int, int, int, str | None]]:
    found = []

    def visit(statements, depth):
        for statement in statements:
            blocks = [getattr(statement, name) for name in ("body", "orelse", "finalbody") if isinstance(getattr(statement, name, None), list)]
            handlers = getattr(statement, "handlers", []) + getattr(statement, "cases", [])
            compound = bool(blocks or handlers)
            dump = None if compound else ast.dump(statement)
            found.append((type(statement).__name__, depth, statement.lineno, statement.end_lineno or statement.lineno, dump))
            for block in blocks:
                visit(block, depth + 1)
            for handler in handlers:
                visit(handler.body, depth + 1)

    visit(tree.body, 0)
    return found


# -- making programs -----------------------------------------------------------------
def graft(program: str, rng: random.Random) -> str:
    """A hazard template with an expression of `program` in its slot, or the program
    and a snippet side by side."""
    expressions = _expressions(program)
    template = rng.choice(TEMPLATES)
    if expressions and rng.random() < 0.7:
        return template.replace("{E}", f"({rng.choice(expressions)})")
    snippet = template.replace("{E}", "xs")
    return snippet + "\n" + program if rng.random() < 0.5 else program.rstrip("\\") + "\n" + snippet


def _expressions(program: str) -> list[str]:
    import libcst as cst

    try:
        module = cst.parse_module(program)
    except Exception:  # noqa: BLE001 - not every generated program is libcst's
        return []
    found: list[str] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, cst.BaseExpression) and len(found) < 50:
                text = module.code_for_node(node)
                if "\n" not in text and "\r" not in text and 0 < len(text) < 200:
                    found.append(text)
            return True

    try:
        module.visit(Collect())
    except RecursionError:
        pass
    return found


MUTATIONS = (
    "delete-line", "duplicate-line", "swap-lines", "newlines-cr", "newlines-crlf", "form-feed",
    "insert-noqa", "insert-char", "delete-chars", "truncate", "nest", "indent", "rename", "nul",
)  # fmt: skip
_NOISE = list("()[]{}:;,.=+-*/%@\\#'\"\t \x0c\r\n") + ["torch", "lambda", "if", "else", "\u2028", "é", "0", "1.5", "**", "not ", "await "]


def mutate(text: str, rng: random.Random, rounds: int = 3) -> str:
    for _ in range(rng.randint(1, rounds)):
        text = _mutate_once(text, rng)
    return text


def _mutate_once(text: str, rng: random.Random) -> str:
    lines = split_lines_keeping_ends(text) or [""]
    kind = rng.choice(MUTATIONS)
    where = rng.randrange(len(lines))
    if kind == "delete-line":
        del lines[where]
    elif kind == "duplicate-line":
        lines.insert(where, lines[where])
    elif kind == "swap-lines":
        other = rng.randrange(len(lines))
        lines[where], lines[other] = lines[other], lines[where]
    elif kind == "newlines-cr":
        return re.sub(r"\r\n|\n", "\r", text)
    elif kind == "newlines-crlf":
        return re.sub(r"\r\n|\r|\n", "\r\n", text)
    elif kind == "form-feed":
        lines[where] = "\x0c" + lines[where]
    elif kind == "insert-noqa":
        line = lines[where]
        body = line.rstrip("\r\n")
        lines[where] = body + rng.choice(["  # noqa", "  # noqa: PH001", "  # noqa: PH001, E501", "# noqa:PH006 why"]) + line[len(body):]
    elif kind == "insert-char":
        position = rng.randrange(len(text) + 1)
        return text[:position] + rng.choice(_NOISE) + text[position:]
    elif kind == "delete-chars":
        position = rng.randrange(len(text) + 1)
        return text[:position] + text[position + rng.randint(1, 8):]
    elif kind == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif kind == "nest":
        depth = rng.choice([5, 50, 199, 250])
        lines.insert(where, "x = " + "(" * depth + "1" + ")" * depth + "\n")
    elif kind == "indent":
        lines[where] = rng.choice([" ", "\t", "    "]) + lines[where]
    elif kind == "rename":
        return _IDENTIFIER.sub(lambda m: rng.choice(["torch", "len", "x", "self.n"]), text, count=1)
    elif kind == "nul":
        position = rng.randrange(len(text) + 1)
        return text[:position] + "\0" + text[position:]
    return "".join(lines)


# -- the campaign --------------------------------------------------------------------
def worker(seed: int, count: int, grammar: float, node: float, out: Path) -> None:
    """Generate and examine `count` programs; one JSON line per program to stdout.
    The program about to be examined is in out/current-<seed>.py, so a native crash
    leaves its culprit behind."""
    _limit_memory(4 * 1024**3)
    rng = random.Random(seed)
    corpus = snippets()
    current = out / f"current-{seed}.py"
    programs = _program_stream(seed, rng, grammar, node, corpus)
    for _ in range(count):
        origin, program = next(programs)
        current.write_text(program, encoding="utf-8", errors="surrogatepass")
        started = time.perf_counter()
        verdict = examine(program)
        record = {
            "origin": origin, "problems": verdict.problems, "parsed": verdict.parsed, "findings": verdict.findings,
            "fixed": verdict.fixed, "limit": verdict.limit, "seconds": round(time.perf_counter() - started, 4),
        }  # fmt: skip
        if verdict.problems:
            record["program"] = program
        print(json.dumps(record), flush=True)
    current.unlink(missing_ok=True)


def _limit_memory(limit: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, ValueError, OSError):
        pass


def _program_stream(seed: int, rng: random.Random, grammar: float, node: float, corpus: list[str]):
    import warnings

    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import NonInteractiveExampleWarning

    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    strategies = {"grammar": hypothesmith.from_grammar(), "node": hypothesmith.from_node()}
    batches: dict[str, list[str]] = {"grammar": [], "node": []}

    def refill(name: str) -> None:
        @hypothesis_seed(rng.randrange(2**32))
        @settings(max_examples=50, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(strategies[name])
        def collect(program: str) -> None:
            batches[name].append(program)

        collect()

    while True:
        draw = rng.random()
        if draw < grammar + node:
            name = "grammar" if draw < grammar else "node"
            if not batches[name]:
                refill(name)
            program = batches[name].pop()
            yield name, graft(program, rng) if rng.random() < 0.9 else program
        else:
            yield "mutation", mutate(rng.choice(corpus), rng)


def campaign(args: argparse.Namespace) -> dict:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    share = [args.programs // args.jobs + (1 if i < args.programs % args.jobs else 0) for i in range(args.jobs)]
    totals = {"programs": 0, "parsed": 0, "with_findings": 0, "with_fixes": 0, "fixes": 0, "over_limits": 0, "worker_deaths": 0}
    problems: dict[str, int] = {"crash": 0, "unparseable-fix": 0, "not-converged": 0, "outside-edits": 0}
    by_origin: dict[str, int] = {}
    seed = args.seed
    pending = [(seed + i * 1_000_003, n) for i, n in enumerate(share)]
    running: list[tuple[subprocess.Popen, int, int, object]] = []
    while pending or running:
        while pending and len(running) < args.jobs:
            job_seed, count = pending.pop()
            log = open(out / f"worker-{job_seed}.jsonl", "w", encoding="utf-8")
            command = [sys.executable, __file__, "--worker", "--seed", str(job_seed), "--programs", str(count),
                       "--grammar", str(args.grammar), "--node", str(args.node), "--out", str(out)]  # fmt: skip
            running.append((subprocess.Popen(command, stdout=log, stderr=subprocess.DEVNULL), job_seed, count, log))
        time.sleep(0.5)
        for entry in list(running):
            process, job_seed, count, log = entry
            if process.poll() is None:
                continue
            running.remove(entry)
            log.close()
            done = _tally(out / f"worker-{job_seed}.jsonl", totals, problems, by_origin, out)
            if process.returncode != 0:  # died on a program: count it, save it, go on
                totals["worker_deaths"] += 1
                problems["crash"] += 1
                totals["programs"] += 1
                current = out / f"current-{job_seed}.py"
                if current.exists():
                    current.rename(out / f"crash-{job_seed}-exit{process.returncode}.py")
                if count - done - 1 > 0:
                    pending.append((job_seed + 7919, count - done - 1))
    elapsed = time.perf_counter() - started
    summary = {**totals, "problems": problems, "origins": by_origin, "seconds": round(elapsed, 1), "jobs": args.jobs}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _tally(log: Path, totals: dict, problems: dict, by_origin: dict, out: Path) -> int:
    done = 0
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        done += 1
        totals["programs"] += 1
        totals["parsed"] += record["parsed"]
        totals["with_findings"] += record["findings"] > 0
        totals["with_fixes"] += record["fixed"] > 0
        totals["fixes"] += record["fixed"]
        totals["over_limits"] += record["limit"]
        by_origin[record["origin"]] = by_origin.get(record["origin"], 0) + 1
        for problem in record["problems"]:
            kind = problem.split(":")[0].replace(" (ast)", "")
            problems[kind] = problems.get(kind, 0) + 1
        if record["problems"]:
            name = out / f"problem-{totals['programs']}.py"
            name.write_text(record["program"], encoding="utf-8", errors="surrogatepass")
            name.with_suffix(".txt").write_text("\n".join(record["problems"]) + "\n")
    return done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=20_000)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1)))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grammar", type=float, default=0.7, help="share of programs from hypothesmith's grammar strategy")
    parser.add_argument("--node", type=float, default=0.05, help="share from its CST-node strategy (slow to generate)")
    parser.add_argument("--out", default="fuzz-out")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.seed, args.programs, args.grammar, args.node, Path(args.out))
        return 0
    summary = campaign(args)
    print(json.dumps(summary, indent=2))
    bad = sum(summary["problems"].values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
