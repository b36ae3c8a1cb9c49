"""Which files a round's index makes stale: those that asked a question it answers
otherwise than the answer their check used (each answer weighed by its fingerprint,
project/index.py).

Each round's index takes over most of the round before's answers with their
fingerprints (project/carry.py). A report found fresh against one index, and not
checked since, can be stale against a later one only through a question that some
index in between did not take over: only the reports that asked one are weighed
again (Megatron-LM: each round weighed 30,000 answers of 1,300 files again, where
a few hundred had changed)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runner import FileReport
    from .index import ProjectIndex


class StaleCheck:
    def __init__(self) -> None:
        self._fresh: dict[int, FileReport] = {}  # position -> the report found fresh
        self._askers: dict[str, set[int]] = {}  # question -> positions of fresh reports that asked it
        # for each index built since the last check, the questions it took over (None: not one)
        self._since: list[frozenset[str] | None] = []

    def follow(self, index: "ProjectIndex") -> None:
        """Called for every index built, each from the one before."""
        self._since.append(index.carried_fingerprints)

    def stale(self, reports: list["FileReport"], index: "ProjectIndex") -> list[int]:
        """The positions of the reports `index` makes stale, in order."""
        since, self._since = self._since, []
        weighed = range(len(reports)) if None in since or not self._fresh else self._may_be_stale(reports, since)
        stale = [i for i in weighed if is_stale(reports[i], index)]
        for i in stale:
            self._fresh.pop(i, None)
        found = set(stale)
        for i in weighed:
            if i not in found and self._fresh.get(i) is not reports[i]:
                self._fresh[i] = reports[i]
                for key in reports[i].dependencies:
                    self._askers.setdefault(key, set()).add(i)
        return stale

    def _may_be_stale(self, reports: list["FileReport"], since: list[frozenset[str] | None]) -> list[int]:
        positions = {i for i, report in enumerate(reports) if self._fresh.get(i) is not report}
        if since:  # (none: the index is the last check's own)
            # every question each index since the last check took over kept its fingerprint
            kept = since[0] if len(since) == 1 else frozenset.intersection(*since)  # type: ignore[arg-type]
            for key in self._askers.keys() - kept:
                positions |= self._askers[key]
        return sorted(positions)


def is_stale(report: "FileReport", index: "ProjectIndex") -> bool:
    return any(index.fingerprint(key) != seen for key, seen in report.dependencies.items())
