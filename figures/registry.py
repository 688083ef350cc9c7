"""Register figure functions by name: run data in, a matplotlib Figure out.

    @figure("ch01.loss", runs=("ch01.default",))
    def loss(runs):
        run = runs["ch01.default"]           # one experiment's last run
        fig, ax = new_figure()               # figures.style: the shared look
        ax.plot(run["step"], run["val_loss"])
        return fig

A deck shows it with ``![Validation loss](fig:ch01.loss)``. ``runs`` lists the
experiments whose data the figure reads (default: every run of its chapter); the
renderer redraws the figure only when its code or that data changed. A run raises a
clear error for a series it does not have. Import matplotlib only inside functions:
it is slow to import, and ``slidegen check`` imports every figure module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_NAME_RE = re.compile(r"[a-z][a-z0-9]*(?:\.[a-z0-9_-]+)+")


@dataclass(frozen=True)
class FigureSpec:
    """A registered figure."""

    name: str
    fn: Callable[[Any], Any]
    runs: tuple[str, ...] | None
    """Experiment ids whose runs the figure reads; ``None``: all of its chapter's."""
    module: str
    line: int
    """Line of the function's ``def`` (for error messages)."""


#: Every figure registered by the figure modules imported so far, by name.
FIGURES: dict[str, FigureSpec] = {}


def figure(name: str, *, runs: Sequence[str] | None = None) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register the decorated function as figure ``name`` (``ch01.loss``)."""
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"figure name {name!r} must look like 'ch01.loss'")

    def register(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if name in FIGURES and FIGURES[name].module != fn.__module__:
            raise ValueError(f"figure {name!r} is registered twice: in {FIGURES[name].module} and {fn.__module__}")
        runs_used = None if runs is None else tuple(runs)
        FIGURES[name] = FigureSpec(name, fn, runs_used, fn.__module__, fn.__code__.co_firstlineno)
        return fn

    return register
