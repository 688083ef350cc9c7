"""Register experiments: plain functions that measure numbers and record series.

An experiment declares its id, config and seeds, takes a :class:`RunContext` and
returns an :class:`Outcome`::

    @experiment("ch05.lr_sweep", config=TrainConfig(steps=2000), quick={"steps": 20}, seeds=(0, 1, 2))
    def lr_sweep(ctx: RunContext) -> Outcome:
        \"\"\"Validation loss against learning rate.\"\"\"
        ...
        ctx.report_progress(0.5, "lr 1e-2")
        return Outcome(
            measurements={"ch05.best_lr": Measurement(3e-2, unit="", what="best learning rate", digits=2)},
            series={"lr": lrs, "val_loss": losses},
        )

``quick`` holds the config fields that ``slidegen run --quick`` overrides (tiny step
counts), so a quick run takes the same code path; dotted names reach into nested
configs, e.g. ``config={"model": ModelConfig(), "train": TrainConfig()}`` with
``quick={"train.steps": 20}``. This module must never import
slidegen: the runner reads :data:`REGISTRY` after importing the chapter modules.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_ID_RE = re.compile(r"(ch\d\d)\.[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Measurement:
    """One measured number: the mean over seeds and its spread."""

    value: float
    sd: float | None = None
    """Standard deviation over seeds (``None`` for a single seed or an exact count)."""
    n: int | None = None
    """Number of seeds behind ``value``."""
    unit: str = ""
    what: str = ""
    """The quantity in words, as a slide's tooltip or a reviewer reads it."""
    digits: int = 4
    """Significant digits a slide shows by default."""


@dataclass
class Outcome:
    """What an experiment returns."""

    measurements: dict[str, Measurement]
    """Result key (``ch05.best_lr``, starting with the experiment's chapter) -> number."""
    series: dict[str, Any] = field(default_factory=dict)
    """Name -> array-like of numbers (any shape), the data behind figures."""


@dataclass(frozen=True)
class RunContext:
    """What an experiment receives: its settings and a way to report progress."""

    quick: bool
    """True under ``--quick``: ``config`` already holds the tiny step counts."""
    seeds: tuple[int, ...]
    config: Any
    progress: Callable[[float, str], None] = field(default=lambda fraction, note: None, repr=False)

    def report_progress(self, fraction: float, note: str = "") -> None:
        """Tell the runner how far along the experiment is (0..1), with an optional note."""
        self.progress(min(max(float(fraction), 0.0), 1.0), note)


@dataclass(frozen=True)
class Experiment:
    """A registered experiment."""

    id: str
    fn: Callable[[RunContext], Outcome]
    description: str
    config: Any
    seeds: tuple[int, ...]
    quick: Mapping[str, Any]
    """Config fields replaced under ``--quick``."""
    uses: tuple[str, ...]
    """Extra files or ``model.*`` modules the fingerprint covers besides the imported ones."""
    module: str

    @property
    def chapter(self) -> str:
        """``ch05`` for ``ch05.lr_sweep``."""
        return self.id.split(".", 1)[0]

    def context(self, quick: bool, progress: Callable[[float, str], None] | None = None) -> RunContext:
        """The :class:`RunContext` of one run, with the quick overrides applied when ``quick``."""
        config = with_overrides(self.config, self.quick) if quick else self.config
        if progress is None:
            return RunContext(quick, self.seeds, config)
        return RunContext(quick, self.seeds, config, progress)


#: Every experiment registered by the chapter modules imported so far, by id.
REGISTRY: dict[str, Experiment] = {}


def experiment(
    id: str,
    *,
    config: Any = None,
    seeds: Sequence[int] = (0,),
    quick: Mapping[str, Any] | None = None,
    uses: Sequence[str] = (),
    description: str | None = None,
) -> Callable[[Callable[[RunContext], Outcome]], Callable[[RunContext], Outcome]]:
    """Register the decorated function as experiment ``id`` (``chNN.name``).

    ``description`` defaults to the first line of the function's docstring.
    """
    if not _ID_RE.fullmatch(id):
        raise ValueError(f"experiment id {id!r} must look like 'ch05.lr_sweep' (chNN.lowercase_name)")
    if quick and config is None:
        raise ValueError(f"{id}: quick overrides need a config to override")

    def register(fn: Callable[[RunContext], Outcome]) -> Callable[[RunContext], Outcome]:
        if id in REGISTRY and REGISTRY[id].module != fn.__module__:
            raise ValueError(f"experiment {id!r} is registered twice: in {REGISTRY[id].module} and {fn.__module__}")
        doc = (fn.__doc__ or "").strip().splitlines()
        REGISTRY[id] = Experiment(
            id=id,
            fn=fn,
            description=description or (doc[0] if doc else ""),
            config=config,
            seeds=tuple(int(s) for s in seeds),
            quick=dict(quick or {}),
            uses=tuple(uses),
            module=fn.__module__,
        )
        return fn

    return register


def with_overrides(config: Any, overrides: Mapping[str, Any]) -> Any:
    """``config`` with some fields replaced; a dotted name reaches inside (``"train.steps"``).

    Dataclasses are copied with :func:`dataclasses.replace`, dicts with an update; a
    name the config lacks is an error, so a typo cannot silently run the full config.
    """
    for name, value in overrides.items():
        config = _replaced(config, name.split("."), value, name)
    return config


def _replaced(obj: Any, path: list[str], value: Any, name: str) -> Any:
    head, rest = path[0], path[1:]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if head not in {f.name for f in dataclasses.fields(obj)}:
            raise KeyError(f"quick override {name!r}: {type(obj).__name__} has no field {head!r}")
        new = _replaced(getattr(obj, head), rest, value, name) if rest else value
        return dataclasses.replace(obj, **{head: new})
    if isinstance(obj, Mapping):
        if head not in obj:
            raise KeyError(f"quick override {name!r}: the config has no key {head!r}")
        new = _replaced(obj[head], rest, value, name) if rest else value
        return {**obj, head: new}
    raise TypeError(f"quick override {name!r}: cannot replace inside a {type(obj).__name__}")
