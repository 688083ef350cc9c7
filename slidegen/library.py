"""A project's citation data, read once per build or check: its works, its CSL styles and its cited numbers.

- ``references.bib`` (:mod:`slidegen.bibliography`): the works;
- ``styles/*.csl``: the CSL styles; a deck picks one with ``csl: NAME`` in its headmatter
  (``styles/NAME.csl``), and a project with a single style needs no such line;
- ``results/cited.yaml`` (:mod:`slidegen.cited`): the published numbers, whose results.md
  rows :func:`cited_rows` writes with the citation formatted by the project's style.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bibliography import BIBLIOGRAPHY_PATH, Bibliography, read_bibliography
from .cited import CITED_PATH, CitedNumbers, read_cited
from .citestyle import STYLES_DIR, CitationStyle, Cluster
from .results import Result


@dataclass(frozen=True)
class Library:
    """Everything a deck's citations are resolved against."""

    bibliography: Bibliography = field(default_factory=Bibliography)
    cited: CitedNumbers = field(default_factory=CitedNumbers)
    styles: Mapping[str, Path] = field(default_factory=dict)
    """Style name (the file name without ``.csl``) -> its file."""
    cache_dir: Path | None = None
    """Where formatted citations are kept between builds (``None``: formatted every time)."""

    def style_name(self, headmatter: Mapping[str, Any]) -> str | None:
        """The style a deck asks for (``csl:``), else the project's only one; None when that is ambiguous or absent."""
        name = headmatter.get("csl")
        if isinstance(name, str) and name:
            return name.removesuffix(".csl").removeprefix(f"{STYLES_DIR}/")
        return next(iter(self.styles)) if len(self.styles) == 1 else None

    def style(self, name: str) -> CitationStyle:
        return CitationStyle(self.styles[name], self.bibliography.entries, self.cache_dir)


def load_library(root: Path, cache_dir: Path | None = None) -> Library:
    """The citation data of the project at ``root`` (missing files: no works, no styles, no cited numbers).

    ``cache_dir``: where formatted citations are kept between builds (:meth:`CitationStyle.format`).
    """
    root = Path(root)
    styles = {p.stem: p for p in sorted((root / STYLES_DIR).glob("*.csl"))}
    return Library(
        read_bibliography(root / BIBLIOGRAPHY_PATH, BIBLIOGRAPHY_PATH),
        read_cited(root / CITED_PATH, CITED_PATH),
        styles,
        cache_dir,
    )


def cited_rows(library: Library) -> list[Result]:
    """The results.md rows of every cited number, the source formatted by the project's style.

    The style is the project's default (:meth:`Library.style_name` of an empty headmatter). A
    number whose work is not in the bibliography (``check`` reports it), or a project without
    a style, has the BibTeX key and locator as its source.
    """
    numbers = library.cited.numbers
    known = [n for n in numbers if n.cite in library.bibliography.entries]
    name = library.style_name({})
    texts: dict[int, str] = {}
    if name is not None and name in library.styles and known:
        clusters = [Cluster(((n.cite, n.locator, ""),)) for n in known]
        formatted = library.style(name).format(clusters).texts
        texts = {id(n): _unwrap(text) for n, text in zip(known, formatted, strict=True)}
    return [n.result(texts.get(id(n)) or (f"{n.cite}, {n.locator}" if n.locator else n.cite)) for n in numbers]


def _unwrap(text: str) -> str:
    """``(Kingma and Ba, 2014, Alg. 1)`` -> ``Kingma and Ba, 2014, Alg. 1``."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text
