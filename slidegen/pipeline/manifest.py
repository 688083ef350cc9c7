"""``build/.manifest.json``: what each output was built from, so a build redoes only what changed.

For every deck the manifest keeps the digest of its bytes, what it depends on (:class:`Deps`:
result keys, figures, components, pictures, snippet files, run records), what the index page
and links need of it (:class:`Entry`: title, chapter, summary, slide numbers and ids) and, per
format, the digest of all its inputs and the files written. A later build hashes those inputs
again (:class:`Inputs`: bytes of files, results.md rows by key; never a parse) and rebuilds an
output only when its digest moved, a file it wrote is gone, or ``--force`` is given.

The manifest is written after the outputs (atomically): a build killed midway leaves the old
manifest, whose digests then differ from the inputs of the decks already rebuilt, and those
are rebuilt again. A deck that failed has no record, so it is retried (and its error shown)
every build. Nothing here imports the parser or a writer.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slidegen.digests import digest, package_digest
from slidegen.digests import json_digest as _json_digest
from slidegen.errors import Diagnostic
from slidegen.project import Project

#: Bumped when the manifest's layout or what a digest covers changes: every output is rebuilt.
FORMAT = 1
MANIFEST_NAME = ".manifest.json"

#: Libraries whose installed copy changes what is written (their location and mtime go into the tool digest).
LIBRARIES = ("pptx", "markdown_it", "mdit_py_plugins", "jinja2", "pygments", "matplotlib", "latex2mathml", "yaml")
#: npm packages copied into or drawn with the HTML.
NODE_PACKAGES = ("reveal.js", "katex", "mermaid")
#: Formats that resolve links to other decks' slides by number (they depend on every deck's slide ids).
LINKED_FORMATS = ("md", "marp")

_REF = re.compile(r"\{\{\s*([^\s|}]+)")
_FIGURE = re.compile(r"fig:([A-Za-z0-9_.\-]+)")
_TAG = re.compile(r"<([a-z][a-z0-9]*(?:-[a-z0-9]+)+)")


@dataclass(frozen=True)
class Deps:
    """What one deck's outputs are made from, besides its own bytes and slidegen itself."""

    keys: tuple[str, ...] = ()
    """Result keys the deck may cite (every ``{{ key`` in its text)."""
    figures: tuple[str, ...] = ()
    """Figure names (``fig:NAME``)."""
    components: tuple[str, ...] = ()
    """Custom-element tags written in the deck (a component file for each, or its absence)."""
    files: tuple[str, ...] = ()
    """Other files read: pictures, snippet imports, run records (resolved paths)."""
    cites: bool = False
    """Whether the deck may cite a work (an ``@`` in its text): it depends on the bibliography and styles."""


def text_deps(text: str, files: tuple[str, ...] = ()) -> Deps:
    """The :class:`Deps` visible in a deck's text (a superset: a key in a code block counts too), plus ``files``."""
    return Deps(
        keys=tuple(sorted(set(_REF.findall(text)))),
        figures=tuple(sorted(set(_FIGURE.findall(text)))),
        components=tuple(sorted(set(_TAG.findall(text)))),
        files=tuple(sorted(set(files))),
        cites="@" in text,
    )


@dataclass(frozen=True)
class Entry:
    """One deck as the index page and links to its slides see it."""

    title: str
    chapter: Any = None
    summary: str = ""
    slides: tuple[tuple[int, str | None, str, int], ...] = ()
    """``(number, id, title, line)`` of each slide."""

    def page(self, slug: str) -> list[Any]:
        """What the index page shows of this deck."""
        return [slug, self.title, self.chapter, self.summary]

    def links(self, slug: str) -> list[Any]:
        """What a link to one of its slides resolves through."""
        return [slug, [[number, slide_id] for number, slide_id, _, _ in self.slides if slide_id]]


@dataclass(frozen=True)
class Output:
    """One format of one deck: the digest of its inputs and the files written."""

    inputs: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Record:
    """Everything the manifest knows of one deck."""

    source: str
    """Digest of the deck's bytes and of the parts it imports (:func:`source_digest`)."""
    deps: Deps
    entry: Entry
    outputs: dict[str, Output] = field(default_factory=dict)
    warnings: tuple[tuple[str, int, int, str], ...] = ()
    """Warnings of its last build ``(path, line, col, message)``, shown again when it is not rebuilt."""


@dataclass(frozen=True)
class Manifest:
    """The records of every deck built into one output folder, and the digest of its index page."""

    decks: dict[str, Record] = field(default_factory=dict)
    """By the deck's resolved path."""
    index: str = ""


def manifest_path(out: Path) -> Path:
    return Path(out) / MANIFEST_NAME


def deck_key(path: Path) -> str:
    """How the manifest names a deck: its resolved path."""
    return Path(path).resolve().as_posix()


def load(out: Path) -> Manifest:
    """The manifest of ``out``; an empty one when it is missing, unreadable or of another format."""
    try:
        data = json.loads(manifest_path(out).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return Manifest()
        decks = {key: _record(value) for key, value in data["decks"].items()}
        return Manifest(decks, str(data.get("index", "")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Manifest()


def save(out: Path, manifest: Manifest) -> None:
    """Write ``manifest`` into ``out`` atomically (after the outputs it describes)."""
    data = {
        "format": FORMAT,
        "index": manifest.index,
        "decks": {key: _plain(record) for key, record in manifest.decks.items()},
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str) + "\n"  # one line: the fast encoder
    # whole or not at all, but not synced to disk: a manifest older than the outputs (lost in a crash)
    # only rebuilds them, and the outputs themselves are synced before it is written
    path = manifest_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)  # a build whose every deck failed wrote nothing there yet
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def forget(out: Path, decks: list[Path]) -> None:
    """Drop the records of ``decks`` (their outputs were replaced by something else, an error page): the next
    build writes them again."""
    manifest = load(out)
    keys = {deck_key(path) for path in decks} & set(manifest.decks)
    if keys:
        save(out, Manifest({k: r for k, r in manifest.decks.items() if k not in keys}, manifest.index))


def _plain(record: Record) -> dict[str, Any]:
    """``record`` as JSON data (what :func:`dataclasses.asdict` gives, without its deep copies)."""
    entry, deps = record.entry, record.deps
    return {
        "source": record.source,
        "deps": {
            "keys": deps.keys,
            "figures": deps.figures,
            "components": deps.components,
            "files": deps.files,
            "cites": deps.cites,
        },
        "entry": {"title": entry.title, "chapter": entry.chapter, "summary": entry.summary, "slides": entry.slides},
        "outputs": {flavor: {"inputs": o.inputs, "paths": o.paths} for flavor, o in record.outputs.items()},
        "warnings": record.warnings,
    }


def _record(data: dict[str, Any]) -> Record:
    entry = data["entry"]
    return Record(
        source=str(data["source"]),
        deps=_deps(data["deps"]),
        entry=Entry(
            entry["title"],
            entry.get("chapter"),
            entry.get("summary", ""),
            tuple((int(n), i, str(t), int(line)) for n, i, t, line in entry["slides"]),
        ),
        outputs={flavor: Output(str(o["inputs"]), tuple(o["paths"])) for flavor, o in data["outputs"].items()},
        warnings=tuple((str(p), int(line), int(col), str(m)) for p, line, col, m in data.get("warnings", ())),
    )


def _deps(data: dict[str, Any]) -> Deps:
    return Deps(
        tuple(data["keys"]),
        tuple(data["figures"]),
        tuple(data["components"]),
        tuple(data["files"]),
        bool(data["cites"]),
    )


class Inputs:
    """Digests of everything an output may depend on, each computed at most once (one per build).

    ``options`` are the settings that change a format's bytes (``{"pdf": notes, "png": scale}``).
    """

    def __init__(self, project: Project, options: dict[str, object] | None = None) -> None:
        self.project = project
        self.options = options or {}
        self._files: dict[str, str] = {}
        self._rows: dict[str, str] | None = None
        self.stale_problem: Diagnostic | None = None
        """Why the rows' staleness could not be told (set by :meth:`rows`), if it could not."""
        self._tool: str | None = None
        self._library: str | None = None
        self._figure_code: str | None = None
        self._runs: dict[str, str] = {}
        self._components: dict[str, str] = {}

    def file(self, path: Path | str) -> str:
        """Digest of a file's bytes (``"-"`` when it cannot be read)."""
        key = str(path)
        if key not in self._files:
            try:
                self._files[key] = digest(Path(path).read_bytes())
            except OSError:
                self._files[key] = "-"
        return self._files[key]

    def tool(self) -> str:
        """slidegen itself: every file of the package (code, templates, theme), the Python and libraries
        it writes with, and the npm packages copied beside the HTML."""
        if self._tool is None:
            self._tool = _json_digest(
                {
                    "format": FORMAT,
                    "python": sys.version,
                    "package": package_digest(),
                    "libraries": _libraries(),
                    "node": self._node(),
                }
            )
        return self._tool

    def _node(self) -> dict[str, str]:
        for start in (Path.cwd().resolve(), Path(__file__).resolve().parents[1]):
            for folder in (start, *start.parents):
                modules = folder / "node_modules"
                if (modules / "reveal.js" / "package.json").is_file():
                    return {name: self.file(modules / name / "package.json") for name in NODE_PACKAGES}
        return {}

    def rows(self) -> dict[str, str]:
        """Every row of results.md by its key, as written, and marked when stale (a row that changes, or
        whose experiment changes, changes what cites it: the deck is bound again and warns)."""
        if self._rows is None:
            from slidegen.record.stale import fingerprints_or_problem, stale_keys

            self._rows = {}
            try:
                text = self.project.results_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            for line in text.splitlines():
                if line.startswith("| ") and not line.startswith(("| key ", "|---")):
                    self._rows[line[2:].split(" |", 1)[0].strip()] = line
            sources = {key: line.rstrip().rstrip("|").rsplit("|", 1)[-1].strip() for key, line in self._rows.items()}
            if any(source.startswith("run ") for source in sources.values()):
                fingerprints, self.stale_problem = fingerprints_or_problem(self.project)
                for key in stale_keys(fingerprints, sources) if fingerprints is not None else ():
                    self._rows[key] += " stale"
        return self._rows

    def library(self) -> str:
        """The bibliography, the cited numbers and the citation styles."""
        if self._library is None:
            root = self.project.root
            files = [root / "references.bib", root / "results" / "cited.yaml", *sorted((root / "styles").glob("*.csl"))]
            configured = self.project.layout.csl  # [tool.slidegen] csl: its name, and the file a path names
            if configured.endswith(".csl"):
                files.append(root / configured)
            self._library = _json_digest({"csl": configured, **{path.name: self.file(path) for path in files}})
        return self._library

    def figure_code(self) -> str:
        """Every Python file of the packages figures are drawn with (figure modules, style, model code)."""
        if self._figure_code is None:
            root = self.project.root
            files = sorted(
                path
                for package in self.project.layout.figure_packages
                for path in (root / package).rglob("*.py")
                if "__pycache__" not in path.parts
            )
            self._figure_code = _json_digest({path.relative_to(root).as_posix(): self.file(path) for path in files})
        return self._figure_code

    def runs(self, chapter: str) -> str:
        """Every run record of one chapter (``results/runs/CHAPTER.*.json``), which its figures draw from."""
        if chapter not in self._runs:
            files = sorted(self.project.runs_dir.glob(f"{chapter}.*.json"))
            self._runs[chapter] = _json_digest({path.name: self.file(path) for path in files})
        return self._runs[chapter]

    def component(self, tag: str) -> str:
        """``components/TAG.js`` and ``.css`` (or their absence)."""
        if tag not in self._components:
            folder = self.project.root / "components"
            self._components[tag] = _json_digest([self.file(folder / f"{tag}.js"), self.file(folder / f"{tag}.css")])
        return self._components[tag]

    def output(self, source: str, deps: Deps, flavor: str, links: str = "") -> str:
        """The digest of one format's inputs for a deck whose bytes have digest ``source``."""
        rows = self.rows()
        payload: dict[str, object] = {
            "tool": self.tool(),
            "flavor": flavor,
            "source": source,
            "rows": {key: rows.get(key) for key in deps.keys},
            "files": {name: self.file(name) for name in deps.files},
            "components": {tag: self.component(tag) for tag in deps.components},
        }
        if deps.cites or any("| cited:" in (rows.get(key) or "") for key in deps.keys):
            payload["library"] = self.library()
        if deps.figures:
            payload["figures"] = {
                "code": self.figure_code(),
                "runs": {c: self.runs(c) for c in sorted({n.split(".", 1)[0] for n in deps.figures})},
            }
        if flavor in LINKED_FORMATS:
            payload["links"] = links
        if flavor in self.options:
            payload["options"] = self.options[flavor]
        return _json_digest(payload)


def _libraries() -> dict[str, str]:
    """Where each library is installed and when (a new version is a new file)."""
    out = {}
    for name in LIBRARIES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        if origin:
            try:
                out[name] = f"{origin}:{Path(origin).stat().st_mtime_ns}"
            except OSError:
                out[name] = origin
    return out


def links_digest(entries: list[tuple[str, Entry]]) -> str:
    """What every deck's links to other decks' slides resolve through: slugs, slide numbers and ids."""
    return _json_digest([entry.links(slug) for slug, entry in entries])


def page_digest(entries: list[tuple[str, Entry]]) -> str:
    """What the index page shows: each deck's slug, title, chapter and summary, in order."""
    return _json_digest([entry.page(slug) for slug, entry in entries])


@dataclass(frozen=True)
class Plan:
    """What one build has to do."""

    changed: frozenset[str]
    """Decks (keys) whose bytes differ from their record, or that have none."""
    stale: dict[str, tuple[str, ...]]
    """Each target deck (key) that must be rebuilt, with the formats that are out of date."""
    sources: dict[str, str]
    """Digest of each deck's bytes and of the parts its record lists (:func:`source_digest`), by key."""


def source_digest(inputs: Inputs, path: Path, files: tuple[str, ...] = ()) -> str:
    """Digest of a deck's bytes and of the Markdown files among ``files`` (the parts it imports with
    ``src:``), so editing a part changes the deck's index entry; a deck without parts: its bytes' digest."""
    own = str(Path(path).resolve())
    parts = sorted(f for f in files if f.endswith(".md") and f != own)
    if not parts:
        return inputs.file(path)
    return digest("\n".join([inputs.file(path), *(f"{f} {inputs.file(f)}" for f in parts)]).encode("utf-8"))


def plan(
    manifest: Manifest,
    inputs: Inputs,
    decks: list[Path],
    targets: list[Path],
    formats: tuple[str, ...],
    out: Path,
    force: bool = False,
    links: str | None = None,
) -> Plan:
    """Which of ``targets`` are out of date in which ``formats``, against ``manifest``.

    ``decks`` are every deck of the index (the project's and the targets). ``links`` is the
    :func:`links_digest` of the index when a linked format is asked for; when it is ``None`` a
    linked format is out of date whenever any deck changed.
    """
    sources = {
        deck_key(p): source_digest(
            inputs, p, manifest.decks[deck_key(p)].deps.files if deck_key(p) in manifest.decks else ()
        )
        for p in decks
    }
    changed = frozenset(
        key for key, source in sources.items() if key not in manifest.decks or manifest.decks[key].source != source
    )
    stale: dict[str, tuple[str, ...]] = {}
    for path in targets:
        key = deck_key(path)
        record = manifest.decks.get(key)
        if force or key in changed or record is None:
            stale[key] = formats
            continue
        late = [flavor for flavor in formats if not _done(record, flavor, inputs, out, links, bool(changed))]
        if late:
            stale[key] = tuple(late)
    return Plan(changed, stale, sources)


def _done(record: Record, flavor: str, inputs: Inputs, out: Path, links: str | None, changed: bool) -> bool:
    """Whether ``record``'s output in ``flavor`` is on disk and was made from today's inputs."""
    done = record.outputs.get(flavor)
    if done is None or not done.paths or not all(_resolve(out, p).is_file() for p in done.paths):
        return False
    if flavor in LINKED_FORMATS and links is None and changed:
        return False  # another deck changed: its slide ids are not known without parsing it
    return done.inputs == inputs.output(record.source, record.deps, flavor, links or "")


def relative(out: Path, path: Path) -> str:
    """How the manifest records a file written: relative to ``out`` when inside it."""
    try:
        return Path(path).resolve().relative_to(Path(out).resolve()).as_posix()
    except ValueError:
        return Path(path).resolve().as_posix()


def _resolve(out: Path, name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else Path(out) / path
