"""``slidegen results diff``: the keys whose values moved between a git revision and the working results.md.

Each change names the slides that cite the key (:func:`slidegen.pipeline.index.citations_of`). The
command prints only the changes a slide would show (:func:`printed_changed`: the value at its
digits, its spread, its unit) and counts the rest.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from slidegen.errors import UsageError
from slidegen.pipeline.index import citations_of
from slidegen.record.results import RESULTS_PATH, Result, Results


@dataclass(frozen=True)
class KeyChange:
    """One key whose value differs between a revision and the working results.md."""

    key: str
    old: Result | None
    """The row at the revision; None when the key is new."""
    new: Result | None
    """The row in the working file; None when the key was removed."""
    citations: tuple[tuple[str, int], ...]
    """``(deck path, line)`` of every slide that cites the key."""

    @property
    def kind(self) -> str:
        """``added``, ``removed`` or ``changed``."""
        return "added" if self.old is None else "removed" if self.new is None else "changed"

    @property
    def old_value(self) -> float | None:
        return None if self.old is None else self.old.value

    @property
    def new_value(self) -> float | None:
        return None if self.new is None else self.new.value

    def __str__(self) -> str:
        def show(r: Result | None) -> str:
            if r is None:
                return "-"
            return f"{r.value:g}" + ("" if r.sd is None else f" ± {r.sd:g}")

        where = ", ".join(f"{p}:{line}" for p, line in self.citations) or "not cited"
        return f"{self.key}: {show(self.old)} -> {show(self.new)} ({where})"


def _shown(r: Result) -> tuple[object, ...]:
    """What a slide can show of a row: a change here is a change of value."""
    return (r.value, r.sd, r.n, r.unit, r.digits)


def results_diff(root: Path, rev: str = "HEAD") -> list[KeyChange]:
    """Keys added, removed or changed in value between ``git show REV:results/results.md`` and the working file.

    Raises :class:`UsageError` when ``rev`` is not a commit of the project's repository.
    """
    root = Path(root)
    check = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        raise UsageError(
            f"unknown revision '{rev}'" if "not a git" not in check.stderr else f"{root} is not in a git repository"
        )
    shown = subprocess.run(["git", "show", f"{rev}:./{RESULTS_PATH}"], cwd=root, capture_output=True)
    old = Results.parse(shown.stdout.decode("utf-8"), f"{rev}:{RESULTS_PATH}") if shown.returncode == 0 else Results()
    try:
        new = Results.read(root / RESULTS_PATH)
    except FileNotFoundError:
        new = Results()
    cites = citations_of(root)
    changes: list[KeyChange] = []
    for key in [*old, *(k for k in new if k not in old)]:
        before, after = old.get(key), new.get(key)
        if before is not None and after is not None and _shown(before) == _shown(after):
            continue
        changes.append(KeyChange(key, before, after, tuple(cites.get(key, []))))
    return changes


def printed(row: Result) -> tuple[str, ...]:
    """A row as slides print it: its value at its digits, with its spread (``pm``) when it has one, and unit."""
    from slidegen.bind.numbers import FilterError, format_result

    try:
        spread = format_result(row, ("pm",)) if row.sd is not None else ""
    except FilterError:
        spread = ""
    return (format_result(row), spread, row.unit)


def printed_changed(change: KeyChange) -> bool:
    """True when a slide would show something else: a key added or removed, or its printed form changed."""
    return change.old is None or change.new is None or printed(change.old) != printed(change.new)
