"""``results/cited.yaml``: the published numbers the decks may show, as project data.

The file has two parts::

    facts:                      # the fact sheet items these numbers rest on, with their status
      S04.adam: P
    numbers:
      - key: ch04.adam.beta2    # the result key a slide writes as {{ ch04.adam.beta2 }}
        value: 0.999
        digits: 3
        unit: ""
        what: Adam default β₂
        cite: kingma2014        # the work, a key of references.bib
        locator: Alg. 1         # where in it (optional)
        fact: S04.adam          # the fact sheet item, and its status: P, S or D
        status: P

``slidegen run`` writes one results.md row per number (:func:`update_cited`); a slide that
shows one lists its work in the deck's references. Statuses are those of the fact sheet:
P read in the primary source, S confirmed through a secondary one, D derived from those,
U unverified (never cited). :func:`read_cited` keeps every value's position, so ``check``
points at the line to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from slidegen.errors import Diagnostic, display_path
from slidegen.record.results import Result, Results

#: Where a project keeps its cited numbers, relative to its root.
CITED_PATH = "results/cited.yaml"
#: Fact statuses a cited number may rest on: P primary, S secondary, D derived (U: unverified).
CITABLE = frozenset("PSD")
_FIELDS = ("key", "value", "digits", "unit", "what", "cite", "locator", "fact", "status")
_REQUIRED = ("key", "value", "digits", "what", "cite", "fact", "status")


@dataclass(frozen=True)
class CitedNumber:
    """One published number and the work, place and fact sheet item it comes from."""

    key: str
    value: float
    digits: int
    unit: str
    what: str
    cite: str
    """The BibTeX key of the work."""
    locator: str
    """Where in the work (``§3``, ``Alg. 1``); may be empty."""
    fact: str
    """The fact sheet item (``S04.adam``)."""
    status: str
    """That item's status as this number states it: ``P``, ``S``, ``D`` or a combination (``P/D``)."""
    line: int = field(default=0, compare=False)
    """1-based line of the number's ``key:`` in the file."""
    at: Mapping[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    """1-based (line, col) of each field's value."""

    def where(self, name: str) -> tuple[int, int]:
        return self.at.get(name, (self.line, 1))

    def result(self, source: str) -> Result:
        """The results.md row for this number; ``source`` is the formatted citation, without ``cited:``."""
        return Result(
            key=self.key,
            value=self.value,
            unit=self.unit,
            what=self.what,
            source=f"cited: {source}",
            digits=self.digits,
        )


@dataclass(frozen=True)
class CitedNumbers:
    """The file as read: its numbers in order, the fact statuses it keeps, and what is wrong with it."""

    path: str = CITED_PATH
    numbers: tuple[CitedNumber, ...] = ()
    facts: Mapping[str, str] = field(default_factory=dict)
    """Fact sheet item -> status, as copied from the fact sheet."""
    fact_at: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    errors: tuple[Diagnostic, ...] = ()
    exists: bool = True
    """False when the project has no such file (its results.md cited rows are then its own)."""

    def by_key(self) -> dict[str, CitedNumber]:
        return {n.key: n for n in self.numbers}


def read_cited(path: Path, name: str | None = None) -> CitedNumbers:
    """Read the cited numbers at ``path`` (no file: none); problems are in ``errors``, never raised."""
    shown = name or display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return CitedNumbers(shown, exists=False)
    return parse_cited(text, shown)


def parse_cited(text: str, name: str = CITED_PATH) -> CitedNumbers:
    """Parse the text of a cited-numbers file; ``name`` is how messages call it."""
    errors: list[Diagnostic] = []

    def error(at: tuple[int, int], message: str) -> None:
        errors.append(Diagnostic(name, at[0], at[1], message))

    try:
        root = _compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        error(at, f"malformed YAML: {getattr(exc, 'problem', None) or exc}")
        return CitedNumbers(name, errors=tuple(errors))
    if root is None:
        return CitedNumbers(name)
    if not isinstance(root, yaml.MappingNode):
        error(_at(root), "the file must be a mapping with 'facts:' and 'numbers:'")
        return CitedNumbers(name, errors=tuple(errors))
    top = _pairs(root)
    for key, (node, _) in top.items():
        if key not in ("facts", "numbers"):
            error(_at(node), f"unknown key '{key}': the file holds 'facts:' and 'numbers:'")
    facts, fact_at = _facts(top.get("facts"), error)
    numbers = _numbers(top.get("numbers"), error)
    return CitedNumbers(name, tuple(numbers), facts, fact_at, tuple(errors))


Report = Callable[[tuple[int, int], str], None]

#: libyaml's parser when PyYAML was built with it (ten times faster, with the same nodes and marks).
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)


def _compose(text: str) -> yaml.Node | None:
    """The document's node tree. A file libyaml rejects is composed again by PyYAML's own parser, whose
    message (the one ``check`` shows) is the one it has always been."""
    if _FAST_LOADER is not None:
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _value(node: yaml.ScalarNode) -> Any:
    """The value of one scalar node, as ``yaml.safe_load`` of that node alone gives it (its tag was resolved
    when the tree was composed)."""
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _at(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _pairs(node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """A mapping node's entries: key text -> (key node, value node)."""
    return {str(k.value): (k, v) for k, v in node.value}


def _facts(
    entry: tuple[yaml.Node, yaml.Node] | None, error: Report
) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
    facts: dict[str, str] = {}
    where: dict[str, tuple[int, int]] = {}
    if entry is None:
        return facts, where
    key_node, node = entry
    if not isinstance(node, yaml.MappingNode):
        error(_at(key_node), "'facts:' must map each fact sheet item to its status, e.g. 'S04.adam: P'")
        return facts, where
    for k, v in node.value:
        if not isinstance(v, yaml.ScalarNode) or not str(v.value).strip():
            error(_at(v), f"the status of fact '{k.value}' must be P, S, D or U")
            continue
        facts[str(k.value)] = str(v.value).strip()
        where[str(k.value)] = _at(k)
    return facts, where


def _numbers(entry: tuple[yaml.Node, yaml.Node] | None, error: Report) -> list[CitedNumber]:
    if entry is None:
        return []
    key_node, node = entry
    if not isinstance(node, yaml.SequenceNode):
        error(_at(key_node), "'numbers:' must be a list of numbers, each starting '- key: chNN.name'")
        return []
    out: list[CitedNumber] = []
    for item in node.value:
        number = _number(item, error)
        if number is not None:
            out.append(number)
    return out


def _number(node: yaml.Node, error: Report) -> CitedNumber | None:
    if not isinstance(node, yaml.MappingNode):
        error(_at(node), f"each cited number is a mapping of {', '.join(_FIELDS)}")
        return None
    pairs = _pairs(node)
    at = {k: _at(v) for k, (_, v) in pairs.items()}
    values: dict[str, Any] = {}
    ok = True
    for k, (key_node, value_node) in pairs.items():
        if k not in _FIELDS:
            error(_at(key_node), f"unknown field '{k}' of a cited number; the fields are {', '.join(_FIELDS)}")
            ok = False
        elif not isinstance(value_node, yaml.ScalarNode):
            error(_at(value_node), f"'{k}' must be a single value")
            ok = False
        else:
            values[k] = _value(value_node)
    missing = [k for k in _REQUIRED if k not in values]
    if missing and ok:
        error(_at(node), f"cited number without {', '.join(repr(m) for m in missing)}")
        return None
    if not ok:
        return None
    try:
        value = float(values["value"])
    except (TypeError, ValueError):
        error(at["value"], f"value '{values['value']}' of '{values['key']}' is not a number")
        return None
    digits = values["digits"]
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        error(at["digits"], f"digits of '{values['key']}' must be a whole number >= 1")
        return None
    text = {k: "" if values.get(k) is None else str(values[k]) for k in _FIELDS}
    return CitedNumber(
        text["key"],
        value,
        digits,
        text["unit"],
        text["what"],
        text["cite"],
        text["locator"],
        text["fact"],
        text["status"],
        _at(node)[0],
        at,
    )


def update_cited(results: Results, rows: Iterable[Result]) -> list[str]:
    """Make ``results``' cited rows exactly ``rows``; return the keys added, changed or removed."""
    rows = list(rows)
    keys = {r.key for r in rows}
    gone = results.remove([k for k, r in results.items() if r.cited and k not in keys])
    return results.merge(rows) + gone
