"""``references.bib``: the works a project's decks cite, read with bibtexparser into CSL-JSON items.

:func:`read_bibliography` parses the file once. Each entry becomes an :class:`Entry`: its
key, the 1-based line it starts on, and its fields as a CSL-JSON item (what citeproc-py
formats). A block that does not parse and a key given twice are :class:`Diagnostic`
errors at their line; the rest of the file is still read, so one typo does not hide
every other work.

Values are taken as written: braces that protect capitals (``{Adam}``) are dropped, ``--``
becomes an en dash, and ``and others`` in an author list means "et al.". Write accented
letters as Unicode (``Schölkopf``), not as TeX commands.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slidegen.errors import Diagnostic, display_path

#: Where a project keeps its bibliography, relative to its root.
BIBLIOGRAPHY_PATH = "references.bib"

#: BibTeX entry types -> CSL item types.
_TYPES = {
    "article": "article-journal",
    "inproceedings": "paper-conference",
    "conference": "paper-conference",
    "book": "book",
    "incollection": "chapter",
    "inbook": "chapter",
    "techreport": "report",
    "phdthesis": "thesis",
    "mastersthesis": "thesis",
    "misc": "article",
    "online": "webpage",
    "unpublished": "manuscript",
}
#: BibTeX fields copied into CSL variables as text.
_TEXT_FIELDS = {
    "title": "title",
    "journal": "container-title",
    "booktitle": "container-title",
    "publisher": "publisher",
    "institution": "publisher",
    "school": "publisher",
    "volume": "volume",
    "number": "issue",
    "pages": "page",
    "doi": "DOI",
    "url": "URL",
    "note": "note",
}


@dataclass(frozen=True)
class Entry:
    """One work of the bibliography."""

    key: str
    line: int
    """1-based line of its ``@type{key,`` in references.bib."""
    csl: dict[str, Any] = field(compare=False)
    """The work as a CSL-JSON item (``id`` is ``key``)."""

    @property
    def year(self) -> str:
        parts = self.csl.get("issued", {}).get("date-parts", [[]])
        return str(parts[0][0]) if parts and parts[0] else ""


@dataclass(frozen=True)
class Bibliography:
    """Every work that read, by key, in file order; ``path`` names the file in messages."""

    path: str = BIBLIOGRAPHY_PATH
    entries: Mapping[str, Entry] = field(default_factory=dict)
    errors: tuple[Diagnostic, ...] = ()
    """Blocks that did not parse and keys given twice."""


def read_bibliography(path: Path, name: str | None = None) -> Bibliography:
    """Read ``path`` (no file: an empty bibliography); ``name`` is how messages call it."""
    shown = name or display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Bibliography(shown)
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        return Bibliography(shown, {}, (Diagnostic(shown, line, 1, "references.bib is not UTF-8 text"),))
    return parse_bibliography(text, shown)


def parse_bibliography(text: str, name: str = BIBLIOGRAPHY_PATH) -> Bibliography:
    """Parse BibTeX ``text``; ``name`` is how messages call the file."""
    from bibtexparser import middlewares
    from bibtexparser.entrypoint import parse_string

    with _quiet():
        library = parse_string(text, append_middleware=[middlewares.SeparateCoAuthors(), middlewares.SplitNameParts()])
    errors: list[Diagnostic] = []
    entries: dict[str, Entry] = {}
    first_line = {e.key: (e.start_line or 0) + 1 for e in library.entries}
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        duplicate = getattr(block, "key", None)
        if duplicate is not None:
            where = f" (first at line {first_line[duplicate]})" if duplicate in first_line else ""
            errors.append(Diagnostic(name, line, 1, f"duplicate BibTeX key '{duplicate}'{where}"))
        else:
            reason = getattr(block.error, "abort_reason", "") or str(block.error)
            errors.append(Diagnostic(name, line, 1, f"malformed BibTeX entry: {_sentence(reason)}"))
    for entry in library.entries:
        fields = {f.key.lower(): f.value for f in entry.fields}
        entries[entry.key] = Entry(entry.key, first_line[entry.key], _csl(entry.key, entry.entry_type, fields))
    return Bibliography(name, entries, tuple(sorted(errors, key=lambda d: d.line)))


@contextmanager
def _quiet() -> Iterator[None]:
    """bibtexparser logs each bad block; they are reported as diagnostics instead."""
    logger = logging.getLogger("bibtexparser")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


def _sentence(reason: str) -> str:
    first = reason.strip().split("\n", 1)[0].rstrip(". ")
    return first[:1].lower() + first[1:] if first else "it does not parse"


def _clean(value: Any) -> str:
    """A field's text: protective braces dropped, ``--`` as an en dash, whitespace collapsed."""
    text = str(value).replace("---", "—").replace("--", "–")
    text = re.sub(r"(?<!\\)[{}]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _names(value: Any) -> list[dict[str, str]]:
    """Authors (bibtexparser ``NameParts``) as CSL names; ``others`` ends the list (et al.)."""
    out: list[dict[str, str]] = []
    for name in value if isinstance(value, list) else []:
        family = " ".join([*getattr(name, "von", []), *getattr(name, "last", [])])
        if family == "others":
            break  # CSL has no "and others": the style abbreviates long lists itself
        person = {"family": _clean(family)}
        given = " ".join(getattr(name, "first", []))
        if given:
            person["given"] = _clean(given)
        out.append(person)
    return out


def _csl(key: str, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"id": key, "type": _TYPES.get(kind.lower(), "article")}
    for name, variable in _TEXT_FIELDS.items():
        if name in fields and variable not in item:
            item[variable] = _clean(fields[name])
    for role in ("author", "editor"):
        if role in fields:
            item[role] = _names(fields[role])
    year = re.search(r"\d{4}", _clean(fields.get("year", "")))
    if year:
        item["issued"] = {"date-parts": [[int(year.group())]]}
    if "eprint" in fields:
        archive = _clean(fields.get("archiveprefix", fields.get("eprinttype", "arXiv")))
        if "container-title" not in item:
            item.setdefault("publisher", archive)
        item["number"] = _clean(fields["eprint"])
        if archive.lower() == "arxiv":
            item.setdefault("URL", f"https://arxiv.org/abs/{item['number']}")
    return item
