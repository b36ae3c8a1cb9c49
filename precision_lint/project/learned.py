"""What a worker has learned of the project during the first round: the summaries of
the files finished before the one it checks (runner.py hands them over with each job).

The first round checks the files in the order of their imports (project/order.py), so
a module's imports are mostly summarized by the time it is checked. Its model can then
ask about their functions and classes at once, instead of getting no answer and being
checked again in a later round once the index has it (torchmetrics: nearly every metric
subclasses `Metric`). What it asked, and what each answer was worth, is recorded as in
any round: a file whose answers differ from the whole index's is checked again."""
from __future__ import annotations

from typing import Any, Iterable

from .index import ProjectNames


class LearnedSummaries(ProjectNames):
    def __init__(self) -> None:
        super().__init__()
        self._answers: dict[str, Any] = {}

    def add(self, summaries: Iterable[dict[str, Any]]) -> None:
        """More summaries, taken as the index takes them."""
        for summary in summaries:
            self._add(summary)
        self._owners.clear()  # a new module may hold a name resolved before
        self._modules_of.clear()
        self._consulted.clear()
        self._answers.clear()

    def answer(self, key: str) -> Any:
        """What the index would answer about a function or a class, from the summaries
        so far. The arguments a function is passed ("p:") need every caller, so those
        wait for the index."""
        if key not in self._answers:
            kind, _, name = key.partition(":")
            self._answers[key] = None if kind == "p" else self.name_answer(kind, name)
        return self._answers[key]
