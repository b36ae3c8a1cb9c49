"""PH004 low-precision-positions."""
from __future__ import annotations

from typing import Iterable

import libcst as cst

from precision_lint.diagnostics import Applicability, Severity
from precision_lint.conditions import RUNTIME, needs
from precision_lint.model.dtypes import BFLOAT16, FLOAT16, RUNTIME_FLOAT
from precision_lint.model.evidence import AUTOCAST
from precision_lint.model.expressions import find_arg
from precision_lint.model.semantic import SemanticModel
from precision_lint.model.torch_calls import range_numbers
from precision_lint.model.values import CallFact, Kind
from precision_lint.rule import Finding, FixAvailability, Invalid, NodeEdit, NodeFix, Rule

LOW_PRECISION = {BFLOAT16: "256", FLOAT16: "2,048"}
CONVERSIONS = frozenset({"to", "type", "half", "bfloat16", "type_as"})
FIX_NOTE = "Unsafe fix: check that what the positions feed (trig, matmul) runs in float32 too."


class LowPrecisionPositions(Rule):
    """
    ## What it does
    Checks for positions or indices built or held in bfloat16 or float16:
    `torch.arange(n, dtype=torch.bfloat16)`, `torch.arange(n).half()` /
    `.to(torch.bfloat16)` / `.type_as(t)` with `t` in low precision, and
    `torch.arange(..., dtype=self.buf.dtype)` or `.type_as(self.buf)` where `buf` is a
    registered buffer, which `model.to(torch.bfloat16)` or `model.half()` casts.
    Not while the module is being built (in `__init__` and the private methods only it
    calls, a buffer still has the dtype it was made with), nor for a buffer the class
    converts back to float32 itself (`self.inv_freq = self.inv_freq.float()`). A range
    whose bounds are known numbers (literals, or names bound to them) is reported only
    when some of its values are not exact in the dtype.

    Positions in the dtype the model runs in (`dtype=query.dtype`,
    `positions.type_as(hidden)`) are warnings, errors once the project casts its model
    to half precision. Positions built in float32 are still rounded when a matmul,
    `F.linear`, an `nn.Linear` or a contracting `einsum` takes them under autocast:
    inside `with torch.autocast(dtype=torch.bfloat16)` that is always reported; in no
    such region, in a method of an `nn.Module` when the project uses autocast where the
    layer runs (its callers may run under it).
    An elementwise product, `torch.outer` and an outer-product `einsum` stay float32.

    ## Why is this bad?
    bfloat16 holds every integer only up to 256, float16 up to 2,048. Past that,
    positions collapse: `torch.arange(8192).to(torch.bfloat16)` has 897 distinct values,
    and position 15962 becomes 15936 or 15968. Rotary embeddings built from such
    positions lose precision at long context (HF transformers #29285, #25681, candle
    #3520, diffusers #13922): the RoPE `inv_freq` buffer is cast with the module, and
    positions built with its dtype follow it down to bfloat16.

    Short ranges are hurt too: the angles `positions * inv_freq` are then computed and
    rounded in bfloat16. Measured with torch 2.13 on CPU, against float64: 64
    positions (head dim 64) are off by up to 0.13 rad, 110 positions (head dim 80, a
    vision encoder's patch grid) by 0.38 rad, 256 positions (head dim 128) by 0.78 rad (Modalities
    #462 reported 0.62 rad at 512).

    ## Example
    ```python
    t = torch.arange(seq_len, device=device).type_as(self.inv_freq)
    ```

    Use instead:
    ```python
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    ```

    ## Fix safety
    Under autocast there is no fix: disable it around the computation
    (`torch.autocast(device_type, enabled=False)`) with float32 operands. Otherwise the
    fix builds the positions in float32 (`dtype=torch.float32`, `.float()`). It is
    unsafe: what the positions feed next may then run in float32 rather than in the
    low precision the code had, which changes results (for the better) and memory.
    """

    code = "PH004"
    name = "low-precision-positions"
    summary = "Positions or indices built in bfloat16 or float16"
    fix_availability = FixAvailability.SOMETIMES

    VALID = [
        # only the length of the cast range is read
        "import torch\nclass R(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('inv_freq', torch.ones(8))\n"
        "    def forward(self, n):\n        seq = torch.arange(n)\n        return len(seq.type_as(self.inv_freq))\n",
        "import torch\nt = torch.arange(4096)\n",
        # literal bounds within the exact range: test data, not long positions
        "import torch\nkeys = torch.arange(32, dtype=torch.bfloat16)\nids = torch.arange(16, 48).half()\n",
        # bounds bound to small numbers: scales 1..9, all exact
        "import torch\ndef scales():\n    n, d = 9, 64\n    return torch.arange(1, n + 1, dtype=torch.bfloat16).view(n, 1) * torch.ones(d)\n",
        # a cache built while the module is built: the buffer is still float32 there
        "import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self, dim, n):\n        super().__init__()\n"
        "        self.register_buffer('inv_freq', 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim))\n"
        "        self._build(n)\n"
        "    def _build(self, n):\n        t = torch.arange(n, dtype=self.inv_freq.dtype)\n"
        "        self.register_buffer('angles', torch.outer(t, self.inv_freq))\n",
        # a buffer the class puts back in float32 before it builds positions from it
        "import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n"
        "        self.register_buffer('inv_freq', torch.ones(dim))\n"
        "    def angles(self, n):\n        if self.inv_freq.dtype != torch.float32:\n            self.inv_freq = self.inv_freq.float()\n"
        "        return torch.outer(torch.arange(n, dtype=self.inv_freq.dtype), self.inv_freq)\n",
        "import torch\nt = torch.arange(4096, dtype=torch.float32)\n",
        "import torch\nt = torch.arange(4096).float()\n",
        # a plain attribute is not cast with the module
        "import torch\nclass R:\n    def __init__(self):\n        self.inv_freq = torch.ones(8)\n"
        "    def forward(self, n):\n        return torch.arange(n).type_as(self.inv_freq)\n",
        # a local float32 tensor
        "import torch\ndef f(n):\n    ref = torch.zeros(1)\n    return torch.arange(n, dtype=ref.dtype)\n",
        # values, not positions, in bfloat16
        "import torch\nx = torch.randn(8).to(torch.bfloat16)\n",
        # float32 positions in a matmul, in a project that never uses autocast
        "import torch\ndef angles(inv_freq, n):\n    t = torch.arange(n).float()\n    return t[:, None] @ inv_freq[None, :]\n",
        # autocast turned off around the matmul
        "import torch\ndef angles(inv_freq, n):\n    t = torch.arange(n).float()\n"
        "    with torch.autocast('cuda', enabled=False):\n        return t[:, None] @ inv_freq[None, :]\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n    pass\n",
        # an outer-product einsum and an elementwise product stay float32 under autocast
        "import torch\ndef angles(inv_freq, n):\n    t = torch.arange(n).float()\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return torch.einsum('i,j->ij', t, inv_freq), t[:, None] * inv_freq\n",
        # rotary frequency exponents (even indices below the head dim), not positions
        "import torch\ndef inv_freq(dim, x):\n    return 1.0 / 10000 ** (torch.arange(0, dim, 2, dtype=x.dtype) / dim)\n",
        # filler weights in a test: no layer's forward, so the project's autocast is not its caller's
        "import torch\ndef test_lora(x):\n    w = torch.arange(64).float().reshape(8, 8)\n    return x @ w\n"
        "def run(model, x):\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return model(x)\n",
        # positions in the dtype of integer data
        "import torch\ndef f(input_ids):\n    return torch.arange(input_ids.shape[1], dtype=input_ids.dtype)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nt = torch.arange(8192, dtype=torch.bfloat16)\n",
            fixed="import torch\nt = torch.arange(8192, dtype=torch.float32)\n",
            applicability=Applicability.UNSAFE,
        ),
        # bounds bound to numbers, past what bfloat16 holds exactly
        Invalid(
            "import torch\ndef grid():\n    rows, cols = 64, 64\n    return torch.arange(rows * cols, dtype=torch.bfloat16)\n",
            fixed="import torch\ndef grid():\n    rows, cols = 64, 64\n    return torch.arange(rows * cols, dtype=torch.float32)\n",
            applicability=Applicability.UNSAFE,
        ),
        # the cache is rebuilt in forward too, after the module may have been cast
        Invalid(
            "import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self, dim, n):\n        super().__init__()\n"
            "        self.register_buffer('inv_freq', torch.ones(dim))\n        self._build(n)\n"
            "    def _build(self, n):\n        self.t = torch.arange(n, dtype=self.inv_freq.dtype)\n"
            "    def forward(self, x):\n        self._build(x.shape[1])\n        return x\n",
            fixed="import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self, dim, n):\n        super().__init__()\n"
            "        self.register_buffer('inv_freq', torch.ones(dim))\n        self._build(n)\n"
            "    def _build(self, n):\n        self.t = torch.arange(n, dtype=torch.float32)\n"
            "    def forward(self, x):\n        self._build(x.shape[1])\n        return x\n",
            applicability=Applicability.UNSAFE,
            severity=Severity.WARNING,
        ),
        Invalid(
            "import torch\nt = torch.arange(4096).half()\n",
            fixed="import torch\nt = torch.arange(4096).float()\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nt = torch.arange(0, 4096).to(torch.bfloat16)\n",
            fixed="import torch\nt = torch.arange(0, 4096).to(torch.float32)\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\ndef f(n, q):\n    q = q.bfloat16()\n    return torch.arange(n).type_as(q)\n",
            fixed="import torch\ndef f(n, q):\n    q = q.bfloat16()\n    return torch.arange(n).float()\n",
            applicability=Applicability.UNSAFE,
        ),
        # the RoPE buffer: cast with the module
        Invalid(
            "import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n"
            "        self.register_buffer('inv_freq', 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))\n"
            "    def forward(self, n):\n        t = torch.arange(n, device=self.inv_freq.device).type_as(self.inv_freq)\n"
            "        return torch.outer(t, self.inv_freq)\n",
            fixed="import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n"
            "        self.register_buffer('inv_freq', 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))\n"
            "    def forward(self, n):\n        t = torch.arange(n, device=self.inv_freq.device).float()\n"
            "        return torch.outer(t, self.inv_freq)\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('inv_freq', torch.ones(4))\n"
            "    def forward(self, n):\n        return torch.arange(n, dtype=self.inv_freq.dtype)\n",
            fixed="import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('inv_freq', torch.ones(4))\n"
            "    def forward(self, n):\n        return torch.arange(n, dtype=torch.float32)\n",
            applicability=Applicability.UNSAFE,
        ),
        # positions in the dtype of the model's data: a warning
        Invalid(
            "import torch\ndef rope(query, n):\n    t = torch.arange(n, device=query.device, dtype=query.dtype)\n    return t\n",
            fixed="import torch\ndef rope(query, n):\n    t = torch.arange(n, device=query.device, dtype=torch.float32)\n    return t\n",
            applicability=Applicability.UNSAFE,
            severity=Severity.WARNING,
        ),
        # float32 positions multiplied inside a bfloat16 autocast region
        Invalid(
            "import torch\ndef angles(inv_freq, n):\n    t = torch.arange(n).float()\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return t[:, None] @ inv_freq[None, :]\n"
        ),
        # position ids into a linear layer, in a project that trains under autocast
        Invalid(
            "import torch\nclass CoordEmbed(torch.nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        self.proj = torch.nn.Linear(2, d)\n"
            "    def forward(self, position_ids):\n        return self.proj(position_ids.float())\n"
            "def train_step(model, batch, scaler):\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return model(batch)\n",
            severity=Severity.ERROR,
        ),
        # positions offset by a whole number are still positions; inside an autocast region
        Invalid(
            "import torch\ndef image_rotary(n, inv_freq, offset=65536):\n    with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
            "        ids = torch.arange(n, dtype=torch.float32) + offset\n        return ids[:, None] @ inv_freq[None, :]\n"
        ),
        # a meshgrid of positions, stacked and flattened, into a linear layer under the project's autocast
        Invalid(
            "import torch\nclass Coords(torch.nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        self.proj = torch.nn.Linear(2, d)\n"
            "    def forward(self, h, w):\n        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')\n"
            "        return self.proj(torch.stack([ys, xs], dim=-1).flatten(0, 1).float())\n"
            "def predict(model, x):\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return model(x)\n"
        ),
        # positions that follow a rotary buffer defined elsewhere (a base class)
        Invalid(
            "import torch\nclass Rotary(ExternalRotary):\n    def cos_sin(self, n):\n        return torch.arange(n, dtype=self.inv_freq.dtype)\n",
            fixed="import torch\nclass Rotary(ExternalRotary):\n    def cos_sin(self, n):\n        return torch.arange(n, dtype=torch.float32)\n",
            applicability=Applicability.UNSAFE,
            severity=Severity.WARNING,
        ),
    ]

    def check(self, model: SemanticModel) -> Iterable[Finding]:
        # `len(seq.type_as(buf))` reads only the length, never a value
        measured = {id(f.node.args[0].value) for f in model.calls if f.qualified == "builtins.len" and f.node.args}
        for fact in model.calls:
            if id(fact.node) in measured:
                continue
            finding = self._arange(fact, model) if fact.qualified == "torch.arange" else None
            if finding is None and fact.method in CONVERSIONS:
                finding = self._conversion(fact, model)
            if finding is not None:
                yield finding
        yield from self._under_autocast(model)

    def _under_autocast(self, model: SemanticModel) -> Iterable[Finding]:
        """A matmul, linear or contracting einsum of float32 positions: autocast runs
        it in bfloat16/float16. Inside `with torch.autocast(...)` here, always; in no
        region here, when the project uses autocast (its callers may be under it)."""
        regions: dict[int, tuple] = {}
        for use in model.autocast_uses:
            seen = regions.get(id(use.node))
            if seen is None or (use.region and not seen[1]):
                regions[id(use.node)] = (use.node, use.region)
        for node, region in regions.values():
            message = (
                "positions enter a matmul that autocast runs in bfloat16/float16: they are exact "
                "only up to 256 (bfloat16) or 2,048 (float16), and so are the angles made from them"
            )
            yield Finding(
                node, message, Severity.ERROR,
                note="No fix: compute it with autocast disabled (`torch.autocast(device_type, enabled=False)`) and float32 operands.",
                conditions=() if region else (needs(AUTOCAST),),
            )  # fmt: skip

    def _arange(self, fact: CallFact, model: SemanticModel) -> Finding | None:
        dtype_arg = find_arg(fact.node, "dtype")
        if dtype_arg is None or not model.value_of(fact.node).positions:
            return None
        if _exact_range(fact.node, model.value_of(dtype_arg.value).dtype, model):
            return None  # `torch.arange(32, dtype=torch.bfloat16)`: small enough to be exact
        dtype = model.value_of(dtype_arg.value)
        torch_name = model.imports.torch_alias() or "torch"
        fix = NodeFix(Applicability.UNSAFE, "Build the positions in float32", (NodeEdit(dtype_arg.value, f"{torch_name}.float32"),))
        if dtype.kind is Kind.DTYPE and dtype.dtype in LOW_PRECISION:
            return self._finding(fact.node, f"positions built in {dtype.dtype.name}", dtype.dtype, fix)
        if dtype.kind is Kind.DTYPE and dtype.buffer:
            return Finding(fact.node, _BUFFER_MESSAGE, Severity.WARNING, fix, note=FIX_NOTE)
        if dtype.kind is Kind.DTYPE and dtype.dtype is RUNTIME_FLOAT:
            return _runtime_finding(fact.node, "built", dtype.dtype_source, fix)
        return None

    def _conversion(self, fact: CallFact, model: SemanticModel) -> Finding | None:
        func = fact.node.func
        assert type(func) is cst.Attribute
        if not model.value_of(func.value).positions:
            return None
        if type(func.value) is cst.Call and _exact_range(func.value, model.value_of(fact.node).dtype, model):
            return None  # `torch.arange(16).half()`: every value is exact
        result = model.value_of(fact.node)
        torch_name = model.imports.torch_alias() or "torch"
        dtype_args = [a for a in fact.node.args if model.value_of(a.value).kind is Kind.DTYPE]
        template = model.value_of(fact.node.args[0].value) if fact.method == "type_as" and fact.node.args else None
        if dtype_args:
            # `.to(device, torch.bfloat16)`: change only the dtype
            template = model.value_of(dtype_args[0].value)
            edits = [NodeEdit(dtype_args[0].value, f"{torch_name}.float32")]
        elif fact.method in ("half", "bfloat16", "type_as"):
            edits = [NodeEdit(func.attr, "float")] + [NodeEdit(arg, "") for arg in fact.node.args]
        else:
            return None
        fix = NodeFix(Applicability.UNSAFE, "Keep the positions in float32", tuple(edits))
        if result.dtype in LOW_PRECISION:
            return self._finding(fact.node, f"positions converted to {result.dtype.name}", result.dtype, fix)
        if template is not None and template.buffer:
            return Finding(fact.node, _BUFFER_MESSAGE, Severity.WARNING, fix, note=FIX_NOTE)
        if result.dtype is RUNTIME_FLOAT:
            return _runtime_finding(fact.node, "converted", result.dtype_source, fix)
        return None

    @staticmethod
    def _finding(node, what: str, dtype, fix: NodeFix) -> Finding:
        message = f"{what}: {dtype.name} holds integers exactly only up to {LOW_PRECISION[dtype]}"
        return Finding(node, message, Severity.ERROR, fix, note=FIX_NOTE)


def _runtime_finding(node, how: str, source: str | None, fix: NodeFix) -> Finding:
    message = (
        f"positions {how} in the model's floating dtype{f' ({source})' if source else ''}: under "
        "bfloat16 they are exact only up to 256 (float16: 2,048)"
    )
    return Finding(node, message, Severity.WARNING, fix, note=FIX_NOTE, conditions=(RUNTIME,))


def _exact_range(arange: cst.Call, dtype, model: SemanticModel) -> bool:
    """Whether every value of `torch.arange(...)` is exact in `dtype`, its bounds being
    known numbers (literals, or names bound to them: `torch.arange(1, n + 1)` with
    `n = 9`): test data such as `torch.arange(32, dtype=torch.bfloat16)`, not positions
    along a sequence."""
    if dtype not in LOW_PRECISION:
        return False
    span = range_numbers(arange, [model.value_of(a.value) for a in arange.args])
    if span is None:
        return False
    start, end, step = span
    if not all(float(n).is_integer() for n in span):
        return False
    count = max(0, -(-(int(end) - int(start)) // int(step)))
    if count == 0:
        return True
    last = int(start) + (count - 1) * int(step)
    return max(abs(int(start)), abs(last)) <= dtype.exact_integer_limit


_BUFFER_MESSAGE = (
    "positions take the dtype of a registered buffer, which `model.to(torch.bfloat16)` "
    "or `.half()` casts: in bfloat16 they are exact only up to 256, and the angles "
    "made from them are off by 0.13 rad by position 64"
)
