"""Citations and references formatted by a CSL style, through citeproc-py.

The style is a ``.csl`` file of the project (``styles/``), so changing how a deck cites is
a data change. :class:`CitationStyle` formats one deck at a time: :meth:`CitationStyle.format`
registers every citation of the deck in order (the style disambiguates across all of
them), and returns each citation's text and the deck's references in the style's order.

Pandoc's locators are mapped to CSL labels (``§2.1`` and ``sec. 2.1`` -> section, ``p. 3``
and a bare number -> page, ``ch.``, ``fig.``, ``tbl.``, ``eq.``); any other locator
(``Alg. 1``) follows the citation as written. An in-text citation (``@key``) is the
parenthetical one turned around: ``Kaplan et al. (2020, sec. 2.1)``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import importlib.util
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slidegen.bind.bibliography import Entry
from slidegen.errors import SlidegenError

#: Where a project keeps its CSL styles, relative to its root.
STYLES_DIR = "styles"

_LABELS = (
    (re.compile(r"(?:§§?|sec\.|secs\.|section|sections)\s*(.+)", re.IGNORECASE), "section"),
    (re.compile(r"(?:p\.|pp\.|page|pages)\s*(.+)", re.IGNORECASE), "page"),
    (re.compile(r"(\d[\d\s,–-]*)"), "page"),
    (re.compile(r"(?:ch\.|chap\.|chapter)\s*(.+)", re.IGNORECASE), "chapter"),
    (re.compile(r"(?:fig\.|figure)\s*(.+)", re.IGNORECASE), "figure"),
    (re.compile(r"(?:tbl\.|table)\s*(.+)", re.IGNORECASE), "table"),
    (re.compile(r"(?:eq\.|eqs\.|equation)\s*(.+)", re.IGNORECASE), "equation"),
)


@dataclass(frozen=True)
class Cluster:
    """One citation as the style sees it: the works, each with its locator, and whether it is in-text."""

    items: tuple[tuple[str, str, str], ...]
    """``(key, locator, prefix)`` per work, in the order written; every key is in the bibliography."""
    in_text: bool = False


@dataclass(frozen=True)
class Reference:
    """One work as the references slide lists it."""

    key: str
    text: str
    """Plain text."""
    html: str
    """HTML, with the style's italics (``<i>``)."""


@dataclass(frozen=True)
class Formatted:
    """A deck's citations formatted: one text per cluster, and the works in the style's order."""

    texts: tuple[str, ...]
    references: tuple[Reference, ...]


def locator_parts(locator: str) -> tuple[str, str] | None:
    """``"§2.1"`` -> ``("section", "2.1")``; ``None`` for a locator the style cannot label."""
    text = locator.strip()
    for pattern, label in _LABELS:
        match = pattern.fullmatch(text)
        if match:
            return label, match.group(1).strip()
    return None


class CitationStyle:
    """A CSL style over the works of a bibliography."""

    def __init__(self, path: Path, entries: Mapping[str, Entry], cache_dir: Path | None = None) -> None:
        self.path = Path(path)
        self.entries = entries
        self.cache_dir = cache_dir
        """Where formatted citations are kept (:meth:`format`); ``None``: citeproc runs every time."""
        self._by_lower = {key.lower(): key for key in entries}

    @property
    def _style(self) -> Any:
        return _parsed(str(self.path), self.path.stat().st_mtime_ns)

    def format(self, clusters: Sequence[Cluster], extra: Sequence[str] = ()) -> Formatted:
        """Format ``clusters`` in order; the references are the works they cite, and the ``extra`` keys.

        With a ``cache_dir``, what is formatted is kept there under the digest of everything it is made
        from (the style file, the works cited as CSL data, the clusters with their locators, the extra
        keys, citeproc-py and slidegen themselves): citeproc runs only when one of those changed.
        """
        if self.cache_dir is None:
            return self._format(clusters, extra)
        path = self.cache_dir / f"{self._cache_key(clusters, extra)}.json"
        kept = _load_formatted(path)
        if kept is not None:
            return kept
        formatted = self._format(clusters, extra)
        _save_formatted(path, formatted)
        return formatted

    def _cache_key(self, clusters: Sequence[Cluster], extra: Sequence[str]) -> str:
        from slidegen.digests import package_digest

        keys = list(dict.fromkeys([item[0] for c in clusters for item in c.items] + list(extra)))
        payload = {
            "format": CACHE_FORMAT,
            "style": hashlib.sha256(self.path.read_bytes()).hexdigest(),
            "works": [self.entries[k].csl for k in keys],
            "named": [self._by_lower.get(k.lower()) for k in keys],  # how the references name them back
            "clusters": [[list(c.items), c.in_text] for c in clusters],
            "extra": list(extra),
            "citeproc": _citeproc_stamp(),
            "slidegen": package_digest(),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]

    def _format(self, clusters: Sequence[Cluster], extra: Sequence[str] = ()) -> Formatted:
        from citeproc import Citation, CitationItem, CitationStylesBibliography, formatter
        from citeproc.source import Locator
        from citeproc.source.json import CiteProcJSON

        keys = list(dict.fromkeys([item[0] for c in clusters for item in c.items] + list(extra)))
        items = [self.entries[k].csl for k in keys]

        def citation(cluster: Cluster) -> Any:
            items = []
            for key, locator, prefix in cluster.items:
                parts = locator_parts(locator) if locator else None
                extra_args: dict[str, Any] = {"prefix": f"{prefix} "} if prefix else {}
                if parts:
                    extra_args["locator"] = Locator(*parts)
                elif locator:
                    extra_args["suffix"] = f", {locator}"
                items.append(CitationItem(key, **extra_args))
            return Citation(items)

        def run(output: Any, escaped: bool) -> tuple[list[str], list[str], list[str]]:
            # one formatter at a time: citeproc-py keeps the formatter on the style itself;
            # its HTML formatter does not escape the works' text, so they are escaped for it
            source = CiteProcJSON([_escaped(item) for item in items] if escaped else items)
            bib = CitationStylesBibliography(self._style, source, output)
            citations = [citation(c) for c in clusters]
            for item in [*citations, *(Citation([CitationItem(k)]) for k in extra)]:
                bib.register(item)
            texts = [str(bib.cite(item, _ignore)) for item in citations]
            bib.sort()
            return texts, list(bib.keys), [str(entry) for entry in bib.bibliography()]

        try:
            plain_texts, order, plain_refs = run(formatter.plain, False)
            _, _, rich_refs = run(formatter.html, True)
        except SlidegenError:
            raise
        except Exception as exc:  # a well-formed file that is not a style citeproc-py can use
            raise SlidegenError(self.path, 1, 1, f"the CSL style cannot format citations: {exc!r}") from None
        texts = [self._in_text(c, t) if c.in_text else t for c, t in zip(clusters, plain_texts, strict=True)]
        references = tuple(
            Reference(self._by_lower.get(key, key), p, r)
            for key, p, r in zip(order, plain_refs, rich_refs, strict=True)
        )
        return Formatted(tuple(texts), references)

    def _in_text(self, cluster: Cluster, text: str) -> str:
        """``(Kaplan et al., 2020, sec. 2.1)`` -> ``Kaplan et al. (2020, sec. 2.1)``, work by work."""
        inner = text[1:-1] if text.startswith("(") and text.endswith(")") else text
        out = []
        for part in inner.split("; "):
            years = [self.entries[item[0]].year for item in cluster.items if self.entries[item[0]].year]
            at = next((part.find(f", {y}") for y in years if f", {y}" in part), -1)
            out.append(f"{part[:at]} ({part[at + 2 :]})" if at > 0 else part)
        return "; ".join(out)


#: Bumped when what the citation cache keeps changes.
CACHE_FORMAT = 1


def _citeproc_stamp() -> str:
    """Where citeproc-py is installed and when (a new version is a new file), without importing it."""
    spec = importlib.util.find_spec("citeproc")
    origin = spec.origin if spec is not None else None
    if not origin:
        return "none"
    return f"{origin}:{Path(origin).stat().st_mtime_ns}"


def _load_formatted(path: Path) -> Formatted | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Formatted(
            tuple(str(t) for t in data["texts"]),
            tuple(Reference(str(k), str(t), str(h)) for k, t, h in data["references"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save_formatted(path: Path, formatted: Formatted) -> None:
    from slidegen.atomic import atomic_write

    data = {"texts": list(formatted.texts), "references": [[r.key, r.text, r.html] for r in formatted.references]}
    with contextlib.suppress(OSError):  # a read-only build folder: formatted again next time
        atomic_write(path, json.dumps(data, ensure_ascii=False) + "\n")


@functools.lru_cache(maxsize=8)
def _parsed(path: str, mtime_ns: int) -> Any:
    """A CSL file parsed once per version (citeproc-py parses a style slowly)."""
    from citeproc import CitationStylesStyle
    from lxml import etree  # type: ignore[import-untyped]

    try:
        return CitationStylesStyle(path, validate=False)
    except etree.XMLSyntaxError as exc:
        line, col = exc.position if exc.position else (1, 1)
        raise SlidegenError(path, line, col + 1, f"malformed CSL style: {exc.msg}") from None
    except Exception as exc:  # citeproc-py raises plain errors for a style it cannot read
        raise SlidegenError(path, 1, 1, f"cannot read the CSL style: {exc}") from None


def _escaped(value: Any) -> Any:
    """A CSL-JSON value with every string HTML-escaped (the ``id`` kept)."""
    if isinstance(value, dict):
        return {k: v if k == "id" else _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    return html.escape(value, quote=False) if isinstance(value, str) else value


def _ignore(item: Any) -> None:
    """citeproc-py reports a work it cannot find; every key was checked before formatting."""


def html_to_text(markup: str) -> str:
    """citeproc's HTML as plain text."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))
