"""What slidegen expects of a project's code: typed protocols, and the checks that hold a project to them.

A project gives slidegen two registries (their modules are named in ``[tool.slidegen]``,
see :mod:`slidegen.project`):

- the experiment registry module holds ``REGISTRY``, a mapping from experiment id to an
  :class:`Experiment`. Running one calls ``exp.context(quick, progress)``, passes the
  :class:`RunContext` it returns to ``exp.fn``, and reads the :class:`Outcome` that
  returns: :class:`Measurement` s by result key and series (arrays of numbers) by name.
- the figure registry module holds ``FIGURES``, a mapping from figure name to a
  :class:`FigureSpec`, whose ``fn(runs)`` returns a matplotlib Figure; an optional style
  module gives ``rc()``, the matplotlib settings every figure is drawn with.

The project never imports slidegen: its own classes satisfy these protocols by their
shape, which mypy can confirm (``tests/test_contracts.py`` does). Protocols check nothing
when a project is loaded, so the functions here check the live objects and raise a
:class:`ContractError` at the file and line to fix, saying what to do.
"""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from slidegen.errors import SlidegenError
from slidegen.record.runstore import compact

# ---------------------------------------------------------------------- the protocols


class Measurement(Protocol):
    """One measured number: the mean over seeds, its spread and how to show it."""

    @property
    def value(self) -> float: ...
    @property
    def sd(self) -> float | None: ...
    @property
    def n(self) -> int | None: ...
    @property
    def unit(self) -> str: ...
    @property
    def what(self) -> str: ...
    @property
    def digits(self) -> int: ...


class Outcome(Protocol):
    """What an experiment returns."""

    @property
    def measurements(self) -> Mapping[str, Measurement]:
        """Result key (``CHAPTER.name``, the experiment's own chapter) -> measurement."""
        ...

    @property
    def series(self) -> Mapping[str, Any]:
        """Name -> array-like of numbers (any shape): the data figures draw."""
        ...


class RunContext(Protocol):
    """What :meth:`Experiment.context` returns; slidegen records its seeds and config with the run."""

    @property
    def quick(self) -> bool: ...
    @property
    def seeds(self) -> Sequence[int]: ...
    @property
    def config(self) -> Any: ...


class Experiment(Protocol):
    """A registered experiment."""

    @property
    def id(self) -> str:
        """``CHAPTER.name``, the key it is registered under."""
        ...

    @property
    def description(self) -> str: ...
    @property
    def fn(self) -> Callable[[Any], Outcome]:
        """Takes the :class:`RunContext` from :meth:`context`, returns an :class:`Outcome`."""
        ...

    @property
    def config(self) -> Any: ...
    @property
    def seeds(self) -> Sequence[int]: ...
    @property
    def uses(self) -> Sequence[str]:
        """Files (``a/b.py``) or modules (``model.x``) the fingerprint covers besides the imported ones."""
        ...

    @property
    def module(self) -> str:
        """The dotted name of the module that registered it."""
        ...

    def context(self, quick: bool, progress: Callable[[float, str], None] | None = None) -> RunContext:
        """The context of one run; ``progress(fraction, note)`` reports how far it is."""
        ...


class ExperimentRegistry(Protocol):
    """The experiment registry module."""

    @property
    def REGISTRY(self) -> Mapping[str, Experiment]: ...


class FigureSpec(Protocol):
    """A registered figure."""

    @property
    def name(self) -> str: ...
    @property
    def fn(self) -> Callable[[Mapping[str, Any]], Any]:
        """Takes the runs by experiment id, returns a matplotlib Figure."""
        ...

    @property
    def runs(self) -> Sequence[str] | None:
        """Experiment ids whose runs the figure reads; ``None``: every run of its chapter."""
        ...

    @property
    def module(self) -> str: ...
    @property
    def line(self) -> int:
        """Line of the figure's definition, for error messages."""
        ...


class FigureRegistry(Protocol):
    """The figure registry module."""

    @property
    def FIGURES(self) -> Mapping[str, FigureSpec]: ...


class FigureStyle(Protocol):
    """The figure style module."""

    def rc(self) -> Mapping[str, Any]: ...


# ---------------------------------------------------------------------- where a problem is


@dataclass(frozen=True)
class Site:
    """A place in the project's code: the file and line a contract error points at."""

    path: Path
    line: int = 1

    def error(self, message: str) -> ContractError:
        return ContractError(self, message)


class ContractError(SlidegenError):
    """Project code that breaks a contract, located at :attr:`site`."""

    def __init__(self, site: Site, message: str) -> None:
        self.site, self.problem = site, message
        super().__init__(site.path, site.line, 1, message)


def site_of(obj: object) -> Site | None:
    """Where a function or class is defined, if known: a function at its first decorator, a class at ``class``."""
    code = getattr(obj, "__code__", None)
    if code is not None and hasattr(code, "co_filename"):
        return Site(Path(code.co_filename), int(code.co_firstlineno))
    if isinstance(obj, type):
        try:
            path = inspect.getsourcefile(obj)
        except TypeError:  # a built-in class
            return None
        return _class_site(Path(path), obj.__qualname__) if path else None
    return None


def _class_site(path: Path, qualname: str) -> Site:
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return Site(path)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == qualname:
            return Site(path, node.lineno)
    return Site(path)


def module_site(module: ModuleType, name: str | None = None) -> Site:
    """The last top-level line of ``module`` that assigns ``name`` (the binding in force), else the module's top."""
    path = Path(getattr(module, "__file__", None) or module.__name__)
    if name is None:
        return Site(path)
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return Site(path)
    for node in reversed(tree.body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return Site(path, node.lineno)
    return Site(path)


# ---------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Member:
    """An attribute a protocol asks for, and how to tell a good value."""

    name: str
    expected: str
    """The kind of value in words: ``a string``."""
    accepts: Callable[[Any], bool]


def _any(value: Any) -> bool:
    return True


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_strs(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(v, str) for v in value)


def _is_ints(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def _is_line(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_runs(value: Any) -> bool:
    return value is None or _is_strs(value)


#: The members of :class:`Experiment`, in the order a message lists them.
EXPERIMENT_MEMBERS = (
    Member("id", "a string", _is_str),
    Member("description", "a string", _is_str),
    Member("fn", "a function taking the run's context", callable),
    Member("config", "any value", _any),
    Member("seeds", "a sequence of whole numbers", _is_ints),
    Member("uses", "a sequence of strings", _is_strs),
    Member("module", "a module name", _is_str),
    Member("context", "a method context(quick, progress)", callable),
)

#: The members of :class:`FigureSpec`.
FIGURE_MEMBERS = (
    Member("name", "a string", _is_str),
    Member("fn", "a function taking the runs", callable),
    Member("runs", "None or a sequence of experiment ids", _is_runs),
    Member("module", "a module name", _is_str),
    Member("line", "a line number", _is_line),
)

#: The members of :class:`RunContext`.
CONTEXT_MEMBERS = (
    Member("quick", "True or False", lambda value: isinstance(value, bool)),
    Member("seeds", "a sequence of whole numbers", _is_ints),
    Member("config", "any value", _any),
)

#: The members of :class:`Measurement`.
MEASUREMENT_MEMBERS = ("value", "sd", "n", "unit", "what", "digits")


def registry_mapping(module: ModuleType, name: str, kind: str) -> Mapping[str, Any]:
    """``module.name`` (``REGISTRY`` or ``FIGURES``), which must be a mapping to ``kind`` s."""
    key = "id" if kind == "experiment" else "name"
    if not hasattr(module, name):
        raise module_site(module).error(
            f"{module.__name__} defines no {name}: define {name}, a mapping from {kind} {key} to {kind} "
            f"(see slidegen.record.contracts.{_protocol(kind)})"
        )
    registry = getattr(module, name)
    if not isinstance(registry, Mapping):
        raise module_site(module, name).error(
            f"{name} is {_describe(registry)}, not a mapping: make it a dict from {kind} {key} to {kind}"
        )
    return registry


def check_experiment(key: object, exp: object, registry: ModuleType) -> None:
    """``exp``, registered under ``key``, has every member of :class:`Experiment`, each of the right kind."""
    entry = "an experiment registry entry"
    _check_members(exp, EXPERIMENT_MEMBERS, f"experiment '{key}'", entry, "Experiment", registry)
    checked: Any = exp
    if checked.id != key:
        raise module_site(registry, "REGISTRY").error(
            f"REGISTRY holds experiment '{checked.id}' under the key '{key}': register each under its own id"
        )


def check_figure(key: object, spec: object, registry: ModuleType) -> None:
    """``spec``, registered under ``key``, has every member of :class:`FigureSpec`, each of the right kind."""
    entry = "a figure registry entry"
    _check_members(spec, FIGURE_MEMBERS, f"figure '{key}'", entry, "FigureSpec", registry)
    checked: Any = spec
    if checked.name != key:
        raise module_site(registry, "FIGURES").error(
            f"FIGURES holds figure '{checked.name}' under the key '{key}': register each under its own name"
        )


def check_context(exp_id: str, context: object, site: Site) -> None:
    """What ``Experiment.context`` returned has the members of :class:`RunContext`."""
    for member in CONTEXT_MEMBERS:
        if not hasattr(context, member.name):
            raise site.error(
                f"experiment '{exp_id}': context() returned {_kind(context)}, which has no '{member.name}': "
                f"return an object with quick, seeds and config (see slidegen.record.contracts.RunContext)"
            )
        value = getattr(context, member.name)
        if not member.accepts(value):
            what = f"{_describe(value)}, not {member.expected}"
            raise site.error(f"experiment '{exp_id}': its context's {member.name} is {what}")


def outcome_data(exp_id: str, outcome: object, site: Site) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The measurements and series of what experiment ``exp_id`` returned, as plain data.

    Anything that is not an :class:`Outcome` of :class:`Measurement` s and numeric series
    is a :class:`ContractError` at ``site`` (the experiment's definition).
    """
    if not (hasattr(outcome, "measurements") and hasattr(outcome, "series")):
        raise site.error(
            f"experiment '{exp_id}' returned {_kind(outcome)}, not an outcome: return an object with measurements "
            f"(result key -> measurement) and series (name -> numbers) (see slidegen.record.contracts.Outcome)"
        )
    checked: Any = outcome
    measurements, series = checked.measurements, checked.series
    for name, value in (("measurements", measurements), ("series", series)):
        if not isinstance(value, Mapping):
            raise site.error(f"experiment '{exp_id}' returned {name} that are {_kind(value)}, not a mapping by name")
    data = {str(key): _measurement(exp_id, str(key), m, site) for key, m in measurements.items()}
    arrays = {}
    for name, values in series.items():
        try:
            arrays[str(name)] = compact(values)
        except (TypeError, ValueError) as error:
            raise site.error(f"experiment '{exp_id}' returned series '{name}' that is not numbers: {error}") from None
    return data, arrays


def _measurement(exp_id: str, key: str, m: object, site: Site) -> dict[str, Any]:
    """One measurement as checked data: finite value and sd, whole n, at least one digit."""
    missing = [name for name in MEASUREMENT_MEMBERS if not hasattr(m, name)]
    if missing:
        raise site.error(
            f"experiment '{exp_id}' measured '{key}' as {_kind(m)}, not a measurement (it lacks {', '.join(missing)}): "
            f"give value, sd, n, unit, what and digits (see slidegen.record.contracts.Measurement)"
        )
    checked: Any = m
    try:
        value = float(checked.value)
        sd = None if checked.sd is None else float(checked.sd)
        n = None if checked.n is None else int(checked.n)
        digits = int(checked.digits)
    except (TypeError, ValueError) as error:
        raise site.error(f"experiment '{exp_id}' measured '{key}' with a value that is not a number: {error}") from None
    if not math.isfinite(value) or (sd is not None and not math.isfinite(sd)):
        raise site.error(f"experiment '{exp_id}': measurement {key} is not finite (value {value!r}, sd {sd!r})")
    if digits < 1:
        raise site.error(f"experiment '{exp_id}': measurement {key} asks for {digits} digits; at least 1")
    return {"value": value, "sd": sd, "n": n, "unit": str(checked.unit), "what": str(checked.what), "digits": digits}


def check_style(module: ModuleType) -> Mapping[str, Any]:
    """``module.rc()``, which must be a mapping of matplotlib settings."""
    rc = getattr(module, "rc", None)
    if not callable(rc):
        raise module_site(module).error(
            f"{module.__name__} has no function rc(): define rc() returning matplotlib rc settings "
            f"(see slidegen.record.contracts.FigureStyle)"
        )
    site = site_of(rc) or module_site(module)
    try:
        settings = rc()
    except Exception as error:
        raise site.error(f"{module.__name__}.rc() failed: {type(error).__name__}: {error}") from None
    if not isinstance(settings, Mapping):
        raise site.error(f"{module.__name__}.rc() returned {_kind(settings)}, not a mapping of matplotlib rc settings")
    return settings


def not_a_figure(name: str, returned: object, site: Site) -> ContractError:
    """The error for a figure function that returned something other than a matplotlib Figure."""
    return site.error(
        f"figure '{name}' returned {_kind(returned)}, not a matplotlib Figure: end the function with 'return fig'"
    )


def _check_members(
    obj: object, members: Sequence[Member], label: str, entry: str, protocol: str, registry: ModuleType
) -> None:
    """Raise at the object's class for a missing member, at its registration for a wrong value."""
    names = ", ".join(m.name for m in members)
    for member in members:
        if not hasattr(obj, member.name):
            where = site_of(type(obj)) or module_site(registry)
            raise where.error(
                f"{label} is {_kind(obj)} without '{member.name}': {entry} needs {names} "
                f"(see slidegen.record.contracts.{protocol})"
            )
    for member in members:
        value = getattr(obj, member.name)
        if not member.accepts(value):
            where = site_of(getattr(obj, "fn", None)) or site_of(type(obj)) or module_site(registry)
            raise where.error(f"{label}: {member.name} is {_describe(value)}, not {member.expected}")


def _protocol(kind: str) -> str:
    return {"experiment": "Experiment", "figure": "FigureSpec"}.get(kind, kind)


def _kind(value: object) -> str:
    """``a list``, ``None``: what a value is, in a message."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _describe(value: object) -> str:
    """``(42,) (a tuple)``; just ``a Table`` for an object whose repr says no more than its address."""
    text = repr(value)
    if text.startswith("<") or value is None:
        return _kind(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{text} ({_kind(value)})"
