"""How long `precision-lint server` takes from a change to its diagnostics.

    python benchmarks/server_latency.py [--lines 2000] [--edits 15]

Starts the server over stdio, opens a generated file of about `--lines` lines, then
makes `--edits` small edits one after another (each waits for its diagnostics) and
times each from sending didChange to receiving publishDiagnostics for that version.
The server's default debounce (25 ms) is included. Beside it, the same file checked in this
process with `check_source` alone: the engine's share of the time. Three files:
ordinary training code with no finding, the same with one hazard, and a file that
is all hazards (one every 12 lines). The target is 300 ms warm for 2,000 lines.
This is a benchmark, not a test: nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import json
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODULE = '''
class Block{i}(nn.Module):
    """A residual MLP block."""

    def __init__(self, width, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        h = self.norm(x)
        h = torch.nn.functional.gelu(self.up(h))
        h = self.drop(self.down(h))
        if mask is not None:
            h = h * mask.unsqueeze(-1).to(h.dtype)
        return x + h


def train_step_{i}(model, batch, optimizer):
    inputs, targets = batch
    optimizer.zero_grad(set_to_none=True)
    logits = model(inputs)
    loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    loss.backward()
    optimizer.step()
    return loss.detach()
'''
HAZARD = '''

def count_correct_{i}(model, loader):
    correct = torch.zeros(1, dtype=torch.float32)
    for inputs, targets in loader:
        predictions = model(inputs).argmax(-1)
        correct += (predictions == targets).sum()
    return correct.item()
'''


KINDS = ("no finding", "one hazard", "all hazards")


def generate(lines: int, kind: str) -> str:
    parts = ["import torch\nimport torch.nn as nn\n"]
    template = HAZARD if kind == "all hazards" else MODULE
    i = 0
    budget = lines - (9 if kind == "one hazard" else 0)
    while sum(p.count("\n") for p in parts) + template.count("\n") <= budget:
        parts.append(template.format(i=i))
        i += 1
    if kind == "one hazard":
        parts.append(HAZARD.format(i="x"))
    return "".join(parts)


class Client:
    """Just enough JSON-RPC over the server's stdio to time it."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put((time.perf_counter(), json.loads(stream.read(length))))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            _, message = self.messages.get(timeout=120)
            if message.get("id") == self.next_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request from the server: accept it
                self.send({"id": message["id"], "result": None})

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def diagnostics(self, uri: str, version: int) -> tuple[float, list]:
        while True:
            at, message = self.messages.get(timeout=120)
            params = message.get("params") or {}
            if message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri:
                if params.get("version") == version:
                    return at, params["diagnostics"]

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.process.wait(timeout=30)


def engine_time(text: str, runs: int) -> float:
    from precision_lint.config import Settings
    from precision_lint.engine import check_source

    codes = Settings(root=Path.cwd()).enabled_codes()
    check_source(text, "bench.py", codes)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        check_source(text, "bench.py", codes)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(text: str, edits: int, root: Path, debounce_ms: float | None) -> dict:
    client = Client([sys.executable, "-m", "precision_lint", "server"])
    options = {} if debounce_ms is None else {"debounceMs": debounce_ms}
    client.request(
        "initialize",
        {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": options},
    )
    client.notify("initialized", {})
    uri = (root / "bench.py").as_uri()
    sent = time.perf_counter()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
    )
    at, found = client.diagnostics(uri, 1)
    first = at - sent
    last_line = text.count("\n")
    latencies = []
    for version in range(2, edits + 2):
        # type a comment on the last line, one character per edit: findings stay the same
        typed = version - 2
        end = {"line": last_line, "character": typed}
        change = {"range": {"start": end, "end": end}, "text": "#" if typed == 0 else "x"}
        sent = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        at, after = client.diagnostics(uri, version)
        latencies.append(at - sent)
        assert len(after) == len(found)
    client.close()
    latencies.sort()
    return {
        "findings": len(found),
        "open": first,
        "median": statistics.median(latencies),
        "p90": latencies[int(0.9 * (len(latencies) - 1))],
        "max": latencies[-1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--debounce-ms", type=float, help="the server's debounce (default: its own, 25)")
    parser.add_argument("--only", choices=KINDS, action="append", help="just these files")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="precision-lint-server-bench-"))
    print(f"{args.lines}-line files, {args.edits} edits each; milliseconds")
    print("| file | lines | findings | open | change, median | p90 | max | check_source alone |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in args.only or KINDS:
        text = generate(args.lines, kind)
        result = measure(text, args.edits, root, args.debounce_ms)
        alone = engine_time(text, 5)
        print(
            f"| {kind} | {text.count(chr(10))} | {result['findings']} | {result['open'] * 1000:.0f} "
            f"| {result['median'] * 1000:.0f} | {result['p90'] * 1000:.0f} | {result['max'] * 1000:.0f} "
            f"| {alone * 1000:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
