"""A project's citation data, read once per build or check: its works, its CSL styles and its cited numbers.

- ``references.bib`` (:mod:`slidegen.bind.bibliography`): the works;
- the CSL styles (:meth:`Library.style_path`): a deck picks one with ``csl: NAME`` in its
  headmatter (``styles/NAME.csl``); a deck that names none takes ``[tool.slidegen] csl``, else the
  only style in ``styles/``, else :data:`DEFAULT_STYLE`, slidegen's own author-date style;
- ``results/cited.yaml`` (:mod:`slidegen.bind.cited`): the published numbers, whose results.md
  rows :func:`cited_rows` writes with the citation formatted by the project's style.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slidegen.bind.bibliography import BIBLIOGRAPHY_PATH, Bibliography, read_bibliography
from slidegen.bind.cited import CITED_PATH, CitedNumbers, read_cited
from slidegen.bind.citestyle import STYLES_DIR, CitationStyle, Cluster
from slidegen.project import read_layout
from slidegen.record.results import Result

#: slidegen's own CSL style (author-date, written for slidegen): the style of a project that has none.
DEFAULT_STYLE = Path(__file__).resolve().parents[1] / "csl" / "author-date.csl"


@dataclass(frozen=True)
class Library:
    """Everything a deck's citations are resolved against."""

    bibliography: Bibliography = field(default_factory=Bibliography)
    cited: CitedNumbers = field(default_factory=CitedNumbers)
    styles: Mapping[str, Path] = field(default_factory=dict)
    """Style name (the file name without ``.csl``) -> its file: the project's ``styles/*.csl``."""
    cache_dir: Path | None = None
    """Where formatted citations are kept between builds (``None``: formatted every time)."""
    configured: str = ""
    """``[tool.slidegen] csl`` as written (``""``: none): a ``.csl`` file relative to the root, or a style's name."""
    root: Path = Path(".")

    def style_path(self, headmatter: Mapping[str, Any]) -> Path | None:
        """The style file of a deck: the one its ``csl:`` names, else ``[tool.slidegen] csl``, else the only
        one in ``styles/``, else :data:`DEFAULT_STYLE`. None when what is named does not exist or
        ``styles/`` holds several and nothing says which (:meth:`style_problem` says why)."""
        name = headmatter.get("csl")
        if isinstance(name, str) and name:
            return self._named(name.removesuffix(".csl").removeprefix(f"{STYLES_DIR}/"))
        if self.configured:
            if self.configured.endswith(".csl"):
                path = self.root / self.configured
                return path if path.is_file() else None
            return self._named(self.configured)
        if len(self.styles) == 1:
            return next(iter(self.styles.values()))
        return DEFAULT_STYLE if not self.styles else None

    def _named(self, name: str) -> Path | None:
        """``styles/NAME.csl``, or the default style by its name (``author-date``) unless a project style has it."""
        return self.styles.get(name) or (DEFAULT_STYLE if name == DEFAULT_STYLE.stem else None)

    def style_problem(self, headmatter: Mapping[str, Any]) -> str:
        """Why :meth:`style_path` found no style for a deck with this headmatter."""
        names = ", ".join([*self.styles, *([] if DEFAULT_STYLE.stem in self.styles else [DEFAULT_STYLE.stem])])
        name = headmatter.get("csl")
        if not (isinstance(name, str) and name) and self.configured:
            if self.configured.endswith(".csl"):
                return f"[tool.slidegen] csl names {self.configured}, which is not a file"
            name = self.configured
        if isinstance(name, str) and name:
            name = name.removesuffix(".csl").removeprefix(f"{STYLES_DIR}/")
            starts = [style for style in self.styles if style.startswith(name)]
            close = starts or difflib.get_close_matches(name, list(self.styles), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            return f"unknown CSL style '{name}'{hint}; the styles are {names}"
        first = next(iter(self.styles))
        return (
            f"several CSL styles in {STYLES_DIR}/: name one in the headmatter, e.g. csl: {first}, "
            "or for every deck in [tool.slidegen] csl of pyproject.toml"
        )

    def style(self, path: Path) -> CitationStyle:
        return CitationStyle(path, self.bibliography.entries, self.cache_dir)


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
        read_layout(root / "pyproject.toml").csl,
        root,
    )


def cited_rows(library: Library) -> list[Result]:
    """The results.md rows of every cited number, the source formatted by the project's style.

    The style is the project's default (:meth:`Library.style_path` of an empty headmatter). A
    number whose work is not in the bibliography (``check`` reports it), or a project whose style
    is ambiguous or missing, has the BibTeX key and locator as its source.
    """
    numbers = library.cited.numbers
    known = [n for n in numbers if n.cite in library.bibliography.entries]
    style = library.style_path({})
    texts: dict[int, str] = {}
    if style is not None and known:
        clusters = [Cluster(((n.cite, n.locator, ""),)) for n in known]
        formatted = library.style(style).format(clusters).texts
        texts = {id(n): _unwrap(text) for n, text in zip(known, formatted, strict=True)}
    return [n.result(texts.get(id(n)) or (f"{n.cite}, {n.locator}" if n.locator else n.cite)) for n in numbers]


def _unwrap(text: str) -> str:
    """``(Kingma and Ba, 2014, Alg. 1)`` -> ``Kingma and Ba, 2014, Alg. 1``."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text
