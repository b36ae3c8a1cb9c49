"""Rule pages: `docs/rules/PHxxx.md`, generated from each rule's docstring and
metadata (the same text `precision-lint rule CODE` prints), and the URL that
diagnostics link to.

The URL comes from `[project.urls]` in pyproject.toml as installed (the package
metadata): `<Documentation>/rules/PHxxx.md`, or else, from the repository's URL
(`Repository`, `Source`, `Homepage`, ...), `<repository>/blob/main/docs/rules/PHxxx.md`.
Without one, or with a placeholder there, there is no URL: output never points at a
host that is not the project's. The CLI (JSON `url`, SARIF `helpUri`, terminal
links) and the language server (`codeDescription`) all ask `rule_url`.

    python -m precision_lint.rule_pages docs/rules    # write the pages again
"""
from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .catalog import rule_codes
from .registry import all_rules

if TYPE_CHECKING:  # the rule classes import libcst; `rule` renders catalog entries
    from .rule import Rule

# Hosts and owners that stand for "fill this in": never linked to.
PLACEHOLDERS = ("example.com", "example.org", "example.net", "/owner/", "your-org", "your_org", "localhost", "<", ">")
_FIX = {"none": "not available", "sometimes": "sometimes available", "always": "always available"}


def render(rule: type[Rule]) -> str:
    from .config import DEFAULT_SELECT

    default = any(rule.code.startswith(prefix) for prefix in DEFAULT_SELECT)
    selected = "On by default." if default else f"Off by default: enable it with `--extend-select {rule.code}`."
    return (
        f"# {rule.name} ({rule.code})\n\n"
        f"Fix is {_FIX[rule.fix_availability.value]}. Severity: {rule.default_severity.value} by default (each finding carries its own). {selected}\n\n"
        f"{rule.documentation()}\n"
    )


def is_placeholder(url: str) -> bool:
    lowered = url.lower() + "/"
    return not lowered.startswith("https://") or any(marker in lowered for marker in PLACEHOLDERS)


# [project.urls] labels that name the repository holding docs/rules/, best first
REPOSITORY_LABELS = ("repository", "source", "source code", "code", "homepage")


@lru_cache(maxsize=1)
def installed_project_urls() -> tuple[str, ...]:
    """The `Project-URL` entries of the installed package (`label, url`)."""
    from importlib import metadata

    try:
        return tuple(metadata.metadata("precision-lint").get_all("Project-URL") or ())
    except metadata.PackageNotFoundError:
        return ()


def rule_url(code: str | None, project_urls: tuple[str, ...] | None = None) -> str | None:
    if code is None or code not in rule_codes():
        return None
    by_label: dict[str, str] = {}
    for entry in installed_project_urls() if project_urls is None else project_urls:
        label, _, url = entry.partition(",")
        if url.strip() and not is_placeholder(url.strip()):
            by_label.setdefault(label.strip().lower(), url.strip().rstrip("/"))
    if "documentation" in by_label:
        return f"{by_label['documentation']}/rules/{code}.md"
    for label in REPOSITORY_LABELS:
        if label in by_label:
            return f"{by_label[label]}/blob/main/docs/rules/{code}.md"
    return None


def write_pages(folder: Path) -> list[Path]:
    """Write every rule's page into `folder`, remove pages of rules that are gone."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in all_rules():
        page = folder / f"{rule.code}.md"
        page.write_text(render(rule), encoding="utf-8")
        written.append(page)
    for stale in set(folder.glob("PH*.md")) - set(written):
        stale.unlink()
    return written


if __name__ == "__main__":
    for path in write_pages(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules")):
        print(path)
