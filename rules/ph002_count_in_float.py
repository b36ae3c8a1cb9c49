"""PH002 count-in-float."""
from __future__ import annotations

from typing import Callable, Iterable

import libcst as cst

from precision_lint.conditions import RUNTIME
from precision_lint.diagnostics import Applicability, Severity
from precision_lint.fixes.arguments import drop_arg
from precision_lint.model.accumulators import only_lengths
from precision_lint.model.dtypes import BFLOAT16, FLOAT16, FLOAT64, RUNTIME_FLOAT
from precision_lint.model.expressions import find_arg
from precision_lint.model.semantic import SemanticModel
from precision_lint.model.syntax import same_place
from precision_lint.model.torch_api import CUMULATIVE_METHODS
from precision_lint.model.values import CallFact, Value
from precision_lint.model.walk import code_children
from precision_lint.rule import Finding, FixAvailability, Invalid, NodeEdit, NodeFix, Rule

LOW_PRECISION = (BFLOAT16, FLOAT16)
CASTS = frozenset({"float", "half", "bfloat16", "double", "to", "type", "type_as"})


class CountInFloat(Rule):
    """
    ## What it does
    Checks for integer counts computed in, or converted to, floating point:
    `(pred == y).float().sum()`, `torch.sum(mask, dtype=torch.float32)`,
    `count.half()` / `count.to(torch.bfloat16)`, and a count packed with a float into
    one tensor (`torch.cat([loss.view(1), num_tokens.view(1)])`, `torch.stack((loss, n))`,
    `torch.tensor([loss_sum, n])`), which silently takes the float's dtype.

    Counts converted to the dtype the model runs in (`count.to(logits.dtype)`,
    `mask.sum(-1).type_as(hidden)`, a one-hot's running count in the gate's dtype) are
    reported as warnings, and as errors when the project casts its model to half
    precision: under bfloat16 they are exact only up to 256.

    ## Why is this bad?
    The sum of a bool mask is an exact int64. Summed in float32 it is rounded past
    2^24 = 16,777,216 elements; in float16 it is exact only to 2,048 and overflows to
    `inf` past 65,504 (tinygrad's accuracy counter), in bfloat16 exact only to 256
    (chai-lab's token counts: 257 became 256). A count packed next to a float loss is
    rounded with it: Megatron's `torch.cat([loss, num_tokens])` is float32, and so is
    every eval-loop total built from it.

    A float32 sum of counts is reported where it is added up: into an accumulator, or
    with `+=`, `x = x + ...`, `a, b = a + ..., b + ...` or `(x := x + ...)` in a loop
    that does not set the total anew each pass (a name, an attribute of one, or an
    element at a place the pass does not pick: `totals[0]`, not `totals[label]` with
    `label` taken each pass), or onto a method's `self.x` (`self.stats.x`,
    `self.x[i]`), whatever the total started as (`correct = 0` is a float32 tensor
    after the first step). `.float().mean()` (a
    fraction) and counts converted after `.item()` are not flagged, nor a count
    converted to float32 once for a ratio.

    ## Example
    ```python
    correct += (pred == target).float().sum()
    ```

    Use instead:
    ```python
    correct += (pred == target).sum()
    ```

    ## Fix safety
    For a float sum of a mask the fix drops the cast (`.float()`, `dtype=`) so the sum
    stays int64. It is unsafe: the result's dtype changes, and an int64 tensor raises
    where a float is added to it in place. Packing and conversions have no fix: keep the
    count in its own int64 tensor.
    """

    code = "PH002"
    name = "count-in-float"
    summary = "Integer counts computed in or converted to floating point"
    fix_availability = FixAvailability.SOMETIMES
    default_severity = Severity.WARNING

    VALID = [
        # bit patterns (uint8 views of packed weights) concatenated with float scales: no count
        "import torch\ndef pack(scale, q):\n    return torch.cat([scale.view(torch.uint8), q.view(torch.uint8)])\n",
        # running counts made float32 on purpose: sine-embedding coordinates, far below 2^24
        "import torch\nclass Sine(torch.nn.Module):\n    def forward(self, x):\n        ones = torch.ones_like(x[0, :1])\n"
        "        return ones.cumsum(1, dtype=torch.float32), ones.cumsum(2, dtype=torch.float32)\n",
        # positions (index arithmetic on `arange`) packed with a float are not counts
        "import torch\nrows = torch.arange(h).view(-1, 1)\npos = (rows * w + cols).reshape(-1)\nidx = torch.cat([torch.zeros(1), pos + 1])\n",
        # a batch size packed with a loss: float32 holds it exactly up to 16.7M samples
        "import torch\nn = len(batch)\nstats = torch.tensor([loss.float().item(), n])\n",
        "import torch\nacc = (pred == y).float().mean()\n",
        # a float32 count used once, per batch, as a ratio
        "import torch\nhits = (pred == y).float().sum()\nprint(hits / y.numel())\n",
        # added once, not in a loop: a per-batch total
        "import torch\ndef f(pred, y, base):\n    base += (pred == y).float().sum()\n    return base\n",
        # set to 0 in each pass: that pass's total only
        "import torch\nfor pred, y in loader:\n    hits = 0\n    hits += (pred == y).float().sum()\n    print(hits / y.numel())\n",
        # a def inside a loop runs when called; an attribute of an argument is not the method's state
        "import torch\nfor x in xs:\n    def inner(pred, y, base):\n        base += (pred == y).float().sum()\n        return base\n",
        "import torch\ndef b(stats, pred, y):\n    stats.total += (pred == y).float().sum()\n",
        "import torch\ndef b(stats, pred, y):\n    stats.total = stats.total + (pred == y).float().sum()\n",
        # set anew each pass by the loop itself, by unpacking, by an annotated `=`, by `with ... as`
        "import torch\nfor total in totals:\n    total = total + (pred == y).float().sum()\n",
        "import torch\nfor pred, y in loader:\n    hits, n = 0, 0\n    hits += (pred == y).float().sum()\n    hits = hits + (pred > 0).float().sum()\n",
        "import torch\nfor pred, y in loader:\n    hits: int = 0\n    hits = hits + (pred == y).float().sum()\n",
        "import torch\nfor pred, y in loader:\n    with tally() as hits:\n        hits += (pred == y).float().sum()\n",
        # an element the pass picks is another total each pass; a `:=` sets anew, as `=` does
        "import torch\nfor label, pred, y in loader:\n    per_class[label] += (pred == y).float().sum()\n",
        "import torch\nfor pred, y in loader:\n    if (hits := 0) == 0:\n        hits = hits + (pred == y).float().sum()\n",
        # unpacking that sets one total anew each pass and adds to the other only once
        "import torch\nfor pred, y in loader:\n    hits, seen = 0, seen + 1\n    hits = hits + (pred == y).float().sum()\n",
        # a sum of another total and this pass's count: set anew each pass
        "import torch\nfor pred, y in loader:\n    hits = base + (pred == y).float().sum()\n    print(hits)\n",
        # a running total of Python floats: `.item()` first, exact to 2^53
        "import torch\ncorrect = 0\nfor pred, y in loader:\n    correct += (pred == y).float().sum().item()\n",
        "import torch\nn = (pred == y).sum()\n",
        "import torch\nratio = (pred == y).sum().float() / y.numel()\n",
        "import torch\nn = (pred == y).sum().item()\nx = float(n)\n",
        "import torch\nw = torch.rand(4)\ns = (w * mask).sum()\n",
        "import torch\nout = torch.cat([a.view(1), b.view(1)])\n",
        # converted to the dtype of integer data: exact
        "import torch\ndef f(mask, lengths):\n    return mask.bool().sum(-1).to(lengths.dtype)\n",
        # a mask counted in float32 asked for by name: log_softmax's `dtype=`, kept through `gather`
        "import torch\nimport torch.nn.functional as F\ndef lprobs(model, tokens, mask):\n"
        "    logits = model(tokens)\n    scores = F.log_softmax(logits, -1, dtype=torch.float).gather(2, tokens[..., None])\n"
        "    mask = mask.type_as(scores)\n    return (scores * mask).sum(-1) / mask.sum(-1)\n",
        # a float ratio in the model's dtype is not a count
        "import torch\ndef f(logits, y):\n    return (logits.argmax(-1) == y).float().mean().to(logits.dtype)\n",
    ]
    INVALID = [
        # a float sum of a mask made an integer again is a token count, then packed with the loss
        Invalid(
            "import torch\ndef loss_func(loss_mask, losses):\n    loss_mask = loss_mask.view(-1).float()\n"
            "    n = loss_mask.sum().to(torch.int)\n    return torch.cat([torch.sum(losses.float() * loss_mask).view(1), n.view(1)])\n",
            severity=Severity.WARNING,
        ),
        # position ids cumulated in the dtype the call asks for
        Invalid("import torch\ndef position_ids(ids, pad):\n    return (ids != pad).cumsum(-1, dtype=torch.bfloat16)\n"),
        Invalid(
            "import torch\ncorrect = torch.zeros(1)\nfor pred, y in batches:\n    correct += (pred == y).float().sum()\n",
            # (PH001 then flags the float32 accumulator itself)
            fixed="import torch\ncorrect = torch.zeros(1)\nfor pred, y in batches:\n    correct += (pred == y).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        # a running total that starts as a Python int is a float32 tensor after the first step
        Invalid(
            "import torch\ndef evaluate(loader):\n    correct = 0\n    for pred, y in loader:\n"
            "        correct += (pred == y).float().sum()\n    return correct\n",
            fixed="import torch\ndef evaluate(loader):\n    correct = 0\n    for pred, y in loader:\n"
            "        correct += (pred == y).sum()\n    return correct\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nclass Accuracy:\n    def __init__(self):\n        self.correct = 0\n"
            "    def update(self, pred, y):\n        self.correct += (pred == y).float().sum()\n",
            fixed="import torch\nclass Accuracy:\n    def __init__(self):\n        self.correct = 0\n"
            "    def update(self, pred, y):\n        self.correct += (pred == y).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        # the same totals written out: `x = x + ...`, and the state of an attribute of `self`
        Invalid(
            "import torch\ncorrect = 0\nfor pred, y in loader:\n    correct = correct + (pred == y).float().sum()\n",
            fixed="import torch\ncorrect = 0\nfor pred, y in loader:\n    correct = correct + (pred == y).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nclass Tracker:\n    def update(self, pred, y):\n        self.stats.correct += (pred == y).float().sum()\n",
            fixed="import torch\nclass Tracker:\n    def update(self, pred, y):\n        self.stats.correct += (pred == y).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nclass Tracker:\n    def update(self, pred, y):\n        self.seen = (y >= 0).float().sum() + self.seen\n",
            fixed="import torch\nclass Tracker:\n    def update(self, pred, y):\n        self.seen = (y >= 0).sum() + self.seen\n",
            applicability=Applicability.UNSAFE,
        ),
        # totals added to in one unpacking, with `:=`, at a fixed element, or on an
        # element of the receiver's state
        Invalid(
            "import torch\nhits, seen = 0, 0\nfor pred, y in loader:\n"
            "    hits, seen = hits + (pred == y).float().sum(), seen + y.numel()\n",
            fixed="import torch\nhits, seen = 0, 0\nfor pred, y in loader:\n"
            "    hits, seen = hits + (pred == y).sum(), seen + y.numel()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nhits = 0\nfor pred, y in loader:\n    print(hits := hits + (pred == y).float().sum())\n",
            fixed="import torch\nhits = 0\nfor pred, y in loader:\n    print(hits := hits + (pred == y).sum())\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\ntally = [0, 0]\nfor pred, y in loader:\n    tally[0] += (pred == y).float().sum()\n",
            fixed="import torch\ntally = [0, 0]\nfor pred, y in loader:\n    tally[0] += (pred == y).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nclass PerClass:\n    def update(self, pred, y, c):\n        self.hits[c] += ((pred == c) & (y == c)).float().sum()\n",
            fixed="import torch\nclass PerClass:\n    def update(self, pred, y, c):\n        self.hits[c] += ((pred == c) & (y == c)).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nn = torch.sum(pred != y, dtype=torch.float16)\n",
            fixed="import torch\nn = torch.sum(pred != y)\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nn = (pred > 0).to(torch.bfloat16).sum()\n",
            fixed="import torch\nn = (pred > 0).sum()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid("import torch\ntokens = mask.bool().sum().to(torch.bfloat16)\n", fixed=None),
        Invalid("import torch\nn = (labels != -100).sum()\npacked = torch.cat([loss.float().view(1), n.view(1)])\n", fixed=None),
        Invalid("import torch\nn = (labels != -100).sum().item()\nstats = torch.tensor([loss.float().item(), n])\n", fixed=None),
        # a count converted to the dtype of the model's data: a warning (bfloat16 in a bf16 run)
        Invalid(
            "import torch\ndef ptm(logits, pair_mask):\n    n = pair_mask.bool().sum(-1).to(logits.dtype)\n    return 1.24 * (n - 15) ** (1 / 3)\n",
            severity=Severity.WARNING,
        ),
        # running counts of a one-hot in the gate's dtype: slots past 256 collide in bf16
        Invalid(
            "import torch\nimport torch.nn.functional as F\ndef slots(expert_idx, gates, n):\n"
            "    one_hot = F.one_hot(expert_idx, n).type_as(gates)\n    return torch.cumsum(one_hot, dim=0) - 1\n",
            severity=Severity.WARNING,
        ),
        # a loss's `.item()` is a Python float: packed with a count, the count goes float
        Invalid(
            "import torch\nloss_sum, tokens = 0.0, 0\nfor b in batches:\n    n = int((b.labels != -100).sum())\n"
            "    loss_sum += model(b).loss.item() * n\n    tokens += n\nstats = torch.tensor([loss_sum, tokens], device='cuda')\n"
        ),
        # a parameter named a mask, counted in the dtype of the model's data
        Invalid(
            "import torch\ndef pool(hidden_states, attention_mask):\n    w = attention_mask.to(hidden_states.dtype)\n"
            "    return (hidden_states * w[..., None]).sum(1) / w.sum(1, keepdim=True)\n",
            severity=Severity.WARNING,
        ),
        # a layer's input is the model's data: a mask counted in its dtype
        Invalid(
            "import torch\nclass MeanPool(torch.nn.Module):\n    def forward(self, x, valid):\n"
            "        weights = valid.bool().to(x.dtype)\n        return (x * weights[..., None]).sum(1) / weights.sum(dim=1, keepdim=True)\n",
            severity=Severity.WARNING,
        ),
    ]

    def check(self, model: SemanticModel) -> Iterable[Finding]:
        # where float counts are accumulated: a float32 sum matters there, not in a
        # one-off per-batch ratio
        accumulated = {model.value_of(add.addend).float_count for a in model.accumulators for add in a.adds}
        running: set[int] | None = None  # read off the whole tree once, where it is asked

        def added_up(node: cst.Call) -> bool:
            nonlocal running
            if id(node) in accumulated:
                return True
            running = _running_totals(model) if running is None else running
            return id(node) in running

        for fact in model.calls:
            value = model.value_of(fact.node)
            if value.float_count != id(fact.node):
                continue  # counts did not become float at this call
            finding = self._finding(fact, value, model, added_up)
            if finding is not None:
                yield finding

    def _finding(self, fact: CallFact, value: Value, model: SemanticModel, added_up: Callable[[cst.Call], bool]) -> Finding | None:
        """`added_up(call)`: whether the call's float counts go into a running total,
        asked only where the finding depends on it (the walk it may take is most of
        this rule's time)."""
        dtype = value.dtype
        if only_lengths([value.length], dtype):
            return None  # batch sizes in float32: exact up to 16.7M samples (PH201)
        name = dtype.label if dtype is not None else "a float dtype"
        runtime = dtype is RUNTIME_FLOAT
        if _packs(fact):
            return Finding(
                fact.node,
                f"a count is packed with floats into one tensor ({name}) and rounded with them",
                Severity.WARNING,
                note="No fix: keep the count in its own int64 tensor (or reduce it separately).",
                conditions=(RUNTIME,) if runtime else (),
            )
        is_sum = fact.method == "sum" or fact.qualified == "torch.sum"
        if dtype not in LOW_PRECISION and not runtime and not (is_sum and added_up(fact.node)):
            return None  # a float32 count used once (a per-batch ratio) is exact enough
        if runtime and value.length and not added_up(fact.node):
            return None  # one dimension (a rank, a length) in the model's dtype: small, and not summed
        severity = Severity.ERROR if dtype in LOW_PRECISION else Severity.WARNING
        limit = dtype.exact_integer_limit_text if dtype is not None else "its limit"
        what = "summed" if is_sum else ("cumulated" if fact.method in CUMULATIVE_METHODS else "converted")
        if runtime and value.dtype_source:
            name = f"{name} ({value.dtype_source})"
        message = f"integer counts {what} in {name}, exact only up to {limit}"
        fix = _drop_cast(fact, model) if is_sum else None
        note = None if fix else "No fix: convert after `.item()`, or keep the count int64."
        if dtype == FLOAT64:
            severity = Severity.WARNING
        return Finding(fact.node, message, severity, fix, note=note, conditions=(RUNTIME,) if runtime else ())


def _running_totals(model: SemanticModel) -> set[int]:
    """The calls whose float counts are added to a running total: a name (an
    attribute of one, or an element at a place the pass does not choose) added to in a
    loop that does not set it anew each pass, or the state of a method's receiver
    (`self.x`, `self.stats.x`, `self.x[i]`: a metric's `update`), with `+=`,
    `x = x + ...`, `a, b = a + ..., b + ...` or `(x := x + ...)`, whatever the total
    started as. `correct = 0` is no tensor the model tracks as an accumulator, yet
    `correct += m.float().sum()` makes it a float32 one after the first step."""
    found: set[int] = set()
    # (node, the names the innermost loop around it sets anew (None: in no loop), the
    # receiver of the method it is in)
    pending: list[tuple[cst.CSTNode, frozenset[str] | None, str | None]] = [(model.module, None, None)]
    while pending:
        node, rebound, receiver = pending.pop()
        kind = type(node)
        additions = _self_additions(node)
        if additions:
            for target, addends in additions:
                if _outlives_a_pass(target, rebound, receiver):
                    found.update(model.value_of(addend).float_count for addend in addends)
            continue
        if kind is cst.ClassDef:  # each method's body knows its receiver
            for statement in getattr(node.body, "body", ()):
                pending.append((statement.body, None, _receiver(statement)) if type(statement) is cst.FunctionDef else (statement, None, None))
            continue
        if kind in (cst.For, cst.While):
            rebound = _bound_in(node)
        elif kind is cst.FunctionDef:  # its body runs when called, not once per pass
            rebound, receiver = None, None
        pending.extend((child, rebound, receiver) for child in code_children(node))
    found.discard(0)
    return found


def _outlives_a_pass(target: cst.BaseExpression, rebound: frozenset[str] | None, receiver: str | None) -> bool:
    """Whether what is added at `target` is kept from one pass (or call) to the next:
    the receiver's state, or a place the innermost loop neither sets anew nor picks
    (`totals[label]` with `label` bound by the loop is a different total each pass)."""
    root, indices = _place_root(target)
    if root is None:
        return False
    if receiver is not None and root == receiver and type(target) is not cst.Name:
        return True
    return rebound is not None and root not in rebound and rebound.isdisjoint(indices)


def _place_root(target: cst.BaseExpression) -> tuple[str | None, set[str]]:
    """The name a place hangs from (`self` for `self.stats.total[i]`; None for a
    call's attribute), and the names its subscripts read."""
    indices: set[str] = set()
    while type(target) in (cst.Attribute, cst.Subscript):
        if type(target) is cst.Subscript:
            pending: list[cst.CSTNode] = list(target.slice)
            while pending:
                node = pending.pop()
                if type(node) is cst.Name:
                    indices.add(node.value)
                pending.extend(code_children(node))
        target = target.value
    return (target.value if type(target) is cst.Name else None), indices


def _self_additions(node: cst.CSTNode) -> list[tuple[cst.BaseExpression, list[cst.BaseExpression]]]:
    """Each total a statement (or `:=`) adds to itself, with what is added to it:
    `total += a`, `total = total + a (+ b)`, `a, b = a + x, b + 1`, `(t := t + x)`."""
    kind = type(node)
    if kind is cst.AugAssign:
        return [(node.target, [node.value])] if type(node.operator) is cst.AddAssign else []
    if kind is cst.Assign and len(node.targets) == 1:
        return _paired_additions(node.targets[0].target, node.value)
    if kind is cst.NamedExpr:
        return _paired_additions(node.target, node.value)
    return []


def _paired_additions(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, list[cst.BaseExpression]]]:
    if type(target) in (cst.Tuple, cst.List) and type(value) in (cst.Tuple, cst.List):
        pairs = list(zip(target.elements, value.elements))
        if len(target.elements) != len(value.elements) or any(type(t) is not cst.Element or type(v) is not cst.Element for t, v in pairs):
            return []  # `a, *rest = ...`: no element stands for another
        return [addition for t, v in pairs for addition in _paired_additions(t.value, v.value)]
    if type(value) is not cst.BinaryOperation or type(target) not in (cst.Name, cst.Attribute, cst.Subscript):
        return []
    terms = _sum_terms(value)
    rest = [term for term in terms if not same_place(term, target)]
    return [(target, rest)] if len(rest) < len(terms) else []


def _sum_terms(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The terms of `a + b + c` (a single term for anything else), without recursion:
    a sum of thousands of terms is one long chain."""
    terms, pending = [], [node]
    while pending:
        current = pending.pop()
        if type(current) is cst.BinaryOperation and type(current.operator) is cst.Add:
            pending += (current.right, current.left)
        else:
            terms.append(current)
    return terms


def _receiver(method: cst.FunctionDef) -> str | None:
    """A method's first parameter (`self`), unless it is a static method."""
    if any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in method.decorators):
        return None
    return method.params.params[0].name.value if method.params.params else None


def _bound_in(loop: cst.CSTNode) -> frozenset[str]:
    """The names a loop sets anew each pass (not in a nested def, and not with
    `x = x + ...`): its own target and its body's `=`, `:=`, `x: int = 0`, `for x in`,
    `with ... as x`. A total set anew each pass counts that pass only. The loop's
    `else:` runs once, after the passes."""
    names: set[str] = set(_names_in(loop.target)) if type(loop) is cst.For else set()
    pending: list[cst.CSTNode] = [loop.body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef):
            continue
        if kind is cst.Assign:
            added = {t.value for t, _ in _self_additions(node) if type(t) is cst.Name}
            for target in node.targets:
                names.update(name for name in _names_in(target.target) if name not in added)
        elif kind is cst.NamedExpr and not _self_additions(node):
            names.update(_names_in(node.target))
        elif kind is cst.AnnAssign and node.value is not None:
            names.update(_names_in(node.target))
        elif kind is cst.For:
            names.update(_names_in(node.target))
        elif kind is cst.WithItem and node.asname is not None:
            names.update(_names_in(node.asname.name))
        pending.extend(code_children(node))
    return frozenset(names)


def _names_in(target: cst.BaseExpression) -> list[str]:
    """The plain names a target binds: `x`, and those in `x, (y, z)` or `[x, *rest]`."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _names_in(element.value)]
    if type(target) is cst.StarredElement:
        return _names_in(target.value)
    return []


def _packs(fact: CallFact) -> bool:
    """`torch.cat([loss, n])`, `torch.tensor([loss_sum, n])`: counts packed with floats
    (a single count wrapped into a float tensor is a conversion)."""
    if fact.qualified in ("torch.cat", "torch.stack", "torch.concat", "torch.concatenate"):
        return True
    data = fact.node.args[0].value if fact.node.args and fact.qualified in ("torch.tensor", "torch.as_tensor") else None
    return type(data) in (cst.List, cst.Tuple)


def _drop_cast(fact: CallFact, model: SemanticModel) -> NodeFix | None:
    """`mask.float().sum()` -> `mask.sum()`; `torch.sum(m, dtype=float)` -> `torch.sum(m)`."""
    node = fact.node
    dtype_arg = find_arg(node, "dtype")
    if dtype_arg is not None:
        if dtype_arg is node.args[0]:
            return None  # no tensor argument before it: not a call to rewrite
        return NodeFix(Applicability.UNSAFE, "Sum in int64: drop `dtype=`", drop_arg(node, dtype_arg))
    receiver = node.func.value if type(node.func) is cst.Attribute else (node.args[0].value if node.args else None)
    if type(receiver) is cst.Call and type(receiver.func) is cst.Attribute and receiver.func.attr.value in CASTS:
        inner = receiver.func.value
        if model.value_of(inner).mask:
            return NodeFix(
                Applicability.UNSAFE,
                "Sum in int64: drop the cast to float",
                # the inner node's own code keeps its parentheses: `(pred == y)`
                (NodeEdit(receiver, model.module.code_for_node(inner)),),
            )
    return None
