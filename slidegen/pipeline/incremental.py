"""One build's plan against the manifest of its output folder (:mod:`slidegen.pipeline.manifest`), and the
manifest it leaves.

:func:`up_to_date` answers "is there anything to do?" from file bytes and the manifest
alone, so a build with nothing to do imports neither the parser nor a writer. :class:`Todo`
is the same plan inside a build: which decks to parse (those changed, for the index), which to
write in which formats, the deck index made of fresh and remembered entries, and the records
to save once the outputs are in place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from slidegen.errors import Diagnostic
from slidegen.pipeline import manifest
from slidegen.pipeline.glossary import refresh_links
from slidegen.pipeline.manifest import Entry, Inputs, Manifest, Output, Record, deck_key
from slidegen.project import Project

if TYPE_CHECKING:
    from slidegen.deck.nodes import Deck, DeckEntry, DeckIndex


class Built(Protocol):
    """What the manifest needs of a deck just built (:class:`slidegen.pipeline.decks.DeckBuilt`)."""

    @property
    def path(self) -> Path: ...
    @property
    def written(self) -> tuple[tuple[str, Path], ...]: ...
    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]: ...
    @property
    def internal(self) -> tuple[str, ...]: ...
    @property
    def deps(self) -> manifest.Deps | None: ...
    @property
    def entry(self) -> DeckEntry | None: ...


class Bound(Protocol):
    """The decks a build parsed (:class:`slidegen.pipeline.bound.BoundDecks`)."""

    @property
    def decks(self) -> dict[Path, Deck]: ...


def index_paths(project: Project, targets: Sequence[Path]) -> list[Path]:
    """Every deck the index lists: the project's, then targets outside it (each once)."""
    seen: dict[Path, Path] = {}
    for path in [*project.deck_paths(), *targets]:
        seen.setdefault(Path(path).resolve(), Path(path))
    return list(seen.values())


def _options(
    notes: bool, scale: float, with_clicks: bool = False, animate: bool = True, single_file: bool = False
) -> dict[str, object]:
    """The build options that change each format's bytes."""
    return {"pdf": [notes, with_clicks], "png": [scale, with_clicks], "pptx": animate, "html": single_file}


def _replay(records: Iterable[Record]) -> list[Diagnostic]:
    return [
        Diagnostic(path, line, col, message, "warning")
        for record in records
        for path, line, col, message in record.warnings
    ]


def up_to_date(
    project: Project,
    targets: Sequence[Path],
    formats: Sequence[str],
    out: Path,
    html_dir: Path | None = None,
    notes: bool = False,
    scale: float = 1.5,
    with_clicks: bool = False,
    animate: bool = True,
    single_file: bool = False,
) -> list[Diagnostic] | None:
    """The remembered warnings of ``targets`` when nothing of theirs (nor the index page) needs
    writing, else ``None``. Reads file bytes and the manifest only (and the glossary, when it changed)."""
    refresh_links(project, out)  # a deck's back-links are among its inputs
    old = manifest.load(out)
    if not old.decks:
        return None
    inputs = Inputs(project, _options(notes, scale, with_clicks, animate, single_file))
    decks = index_paths(project, targets)
    plan = manifest.plan(old, inputs, decks, list(targets), tuple(formats), out)
    if plan.changed:
        return None
    entries = [(p.stem, old.decks[deck_key(p)].entry) for p in decks]
    if any(flavor in manifest.LINKED_FORMATS for flavor in formats):  # nothing changed: the records know the links
        plan = manifest.plan(
            old, inputs, decks, list(targets), tuple(formats), out, links=manifest.links_digest(entries)
        )
    if plan.stale:
        return None
    if "html" in formats:
        page = (html_dir or Path(out) / "html") / "index.html"
        if manifest.page_digest(entries) != old.index or not page.is_file():
            return None
    return _replay(old.decks[deck_key(p)] for p in targets)


class Todo:
    """What one build does: :meth:`make`, then :meth:`entries_from` the decks parsed, then the writes,
    :meth:`finish`, :meth:`printed` and :meth:`save`."""

    def __init__(
        self,
        project: Project,
        targets: list[Path],
        formats: tuple[str, ...],
        out: Path,
        html_dir: Path,
        options: dict[str, object],
        force: bool,
    ) -> None:
        self.project = project
        self.targets = targets
        self.formats = formats
        self.out = Path(out)
        self.html_dir = Path(html_dir)
        self.force = force
        refresh_links(project, out)  # a deck's back-links are among its inputs
        self.old = manifest.load(out)
        self.inputs = Inputs(project, options)
        self.decks = index_paths(project, targets)
        self.linked = any(flavor in manifest.LINKED_FORMATS for flavor in formats)
        self.plan = manifest.plan(self.old, self.inputs, self.decks, targets, formats, out, force)
        self.entries: dict[str, DeckEntry] = {}
        self.imported: dict[str, tuple[str, ...]] = {}
        """The files each deck parsed for its index entry was read from (itself and its ``src:`` parts)."""
        self.records: dict[str, Record] = {
            key: record
            for key, record in self.old.decks.items()
            if key in self.plan.sources and self.plan.sources[key] != "-"
        }
        self.links = ""

    @classmethod
    def make(
        cls,
        project: Project,
        targets: list[Path],
        formats: tuple[str, ...],
        out: Path,
        html_dir: Path,
        notes: bool = False,
        scale: float = 1.5,
        force: bool = False,
        with_clicks: bool = False,
        animate: bool = True,
        single_file: bool = False,
    ) -> Todo:
        return cls(
            project, targets, formats, out, html_dir, _options(notes, scale, with_clicks, animate, single_file), force
        )

    @property
    def to_parse(self) -> list[Path]:
        """The decks to parse before writing: changed decks not written (their index entries may have
        moved), and with a linked format the decks to write too (the others parse as they are written)."""
        stale, changed = self.plan.stale, self.plan.changed
        if self.linked:  # their links need every entry before anything is written
            return [p for p in self.decks if deck_key(p) in stale or deck_key(p) in changed]
        return [p for p in self.decks if deck_key(p) in changed and deck_key(p) not in stale]

    def entries_from(self, bound: Bound) -> list[Path]:
        """Take the index entries of the decks parsed; with a format that links to other decks'
        slides, plan again knowing them. Returns the decks now out of date that were not parsed
        (they parse as they are written)."""
        from slidegen.pipeline.index import index_of

        for deck in bound.decks.values():
            self.entries[deck_key(deck.path)] = index_of([deck]).decks[0]
            imported = {s.path for s in deck.slides if s.path is not None} | {s.path for s in deck.imports}
            self.imported[deck_key(deck.path)] = tuple(sorted(str(Path(p).resolve()) for p in imported))
        if not self.linked:
            return []
        self.links = manifest.links_digest(self._entries())
        self.plan = manifest.plan(
            self.old, self.inputs, self.decks, self.targets, self.formats, self.out, self.force, self.links
        )
        parsed = {deck_key(p) for p in bound.decks}
        return [p for p in self.targets if deck_key(p) in self.plan.stale and deck_key(p) not in parsed]

    @property
    def paths(self) -> list[Path]:
        """The targets to write, in order."""
        return [p for p in self.targets if deck_key(p) in self.plan.stale]

    @property
    def deck_formats(self) -> dict[Path, tuple[str, ...]]:
        """The formats to write of each target written."""
        return {p: self.plan.stale[deck_key(p)] for p in self.paths}

    @property
    def fresh(self) -> list[Path]:
        """The targets left alone."""
        return [p for p in self.targets if deck_key(p) not in self.plan.stale]

    def _entries(self) -> list[tuple[str, Entry]]:
        out = []
        for path in self.decks:
            key = deck_key(path)
            if key in self.entries:
                out.append((path.stem, _entry(self.entries[key])))
            elif key in self.records and key not in self.plan.changed:
                out.append((path.stem, self.records[key].entry))
        return out

    def index(self) -> DeckIndex:
        """Every deck's index entry: parsed this build, or remembered."""
        from slidegen.deck.nodes import DeckEntry, DeckIndex, SlideEntry

        decks = []
        for path in self.decks:
            key = deck_key(path)
            if key in self.entries:
                decks.append(self.entries[key])
            elif key in self.records and key not in self.plan.changed:
                entry = self.records[key].entry
                decks.append(
                    DeckEntry(
                        path,
                        entry.title,
                        {"chapter": entry.chapter, "summary": entry.summary},
                        tuple(SlideEntry(*slide) for slide in entry.slides),
                    )
                )
        return DeckIndex(tuple(decks))

    def replayed(self) -> list[Diagnostic]:
        """The remembered warnings of the targets not rebuilt."""
        return _replay(self.records[deck_key(p)] for p in self.fresh if deck_key(p) in self.records)

    def finish(self, built: Sequence[Built]) -> str | None:
        """Record the decks built (a deck that failed loses its record). Returns the digest of the
        index page when it must be written, else ``None``."""
        for deck in built:
            if deck.entry is not None:
                self.entries[deck_key(deck.path)] = deck.entry
        for deck in built:
            key = deck_key(deck.path)
            entry = self.entries.get(key)
            if deck.deps is None or deck.internal or entry is None:
                self.records.pop(key, None)
                continue
            source = manifest.source_digest(self.inputs, deck.path, deck.deps.files)
            previous = self.records.get(key)
            outputs = dict(previous.outputs) if previous is not None else {}
            for flavor in self.plan.stale.get(key, ()):
                files = tuple(manifest.relative(self.out, p) for f, p in deck.written if f == flavor)
                if files or flavor in ("pdf", "png"):
                    outputs[flavor] = Output(self.inputs.output(source, deck.deps, flavor, self.links), files)
                else:
                    outputs.pop(flavor, None)
            warnings = tuple((d.path, d.line, d.col, d.message) for d in deck.diagnostics if d.severity == "warning")
            self.records[key] = Record(source, deck.deps, _entry(entry), outputs, warnings)
        self._remember_parsed({deck_key(deck.path) for deck in built})
        self._built = bool(built)
        if "html" not in self.formats:
            self._page = self.old.index
            return None
        page = manifest.page_digest(self._entries())
        self._page = page
        if self.force or page != self.old.index or not (self.html_dir / "index.html").is_file():
            return page
        return None

    def _remember_parsed(self, built: set[str]) -> None:
        """Record the index entry of each deck parsed but not written, with the digest of the bytes it was
        parsed from: a later build takes its entry from the manifest instead of parsing it again. Its
        outputs stay as they were (their digests cover the old bytes, so they are still rebuilt when asked for)."""
        paths = {deck_key(p): p for p in self.decks}
        for key, entry in self.entries.items():
            if key in built or key not in paths or self.plan.sources.get(key, "-") == "-":
                continue
            files = self.imported.get(key, ())
            source = manifest.source_digest(self.inputs, paths[key], files)
            previous = self.records.get(key)
            if previous is None:
                self.records[key] = Record(source, manifest.Deps(files=files), _entry(entry))
            elif previous.source != source or previous.entry != _entry(entry):
                deps = replace(previous.deps, files=tuple(sorted(set(previous.deps.files) | set(files))))
                self.records[key] = Record(source, deps, _entry(entry), dict(previous.outputs), previous.warnings)

    def printed(self, flavor: str, written: Sequence[Path], problems: Sequence[Diagnostic]) -> None:
        """Record the PDF or PNG files printed; a deck whose printing failed keeps none (it is printed again)."""
        for path in self.paths:
            key = deck_key(path)
            record = self.records.get(key)
            if record is None or flavor not in record.outputs:
                continue
            slug = path.stem
            mine = tuple(
                manifest.relative(self.out, p)
                for p in written
                if Path(p).parent.name == slug or Path(p).name.startswith(f"{slug}.")
            )
            done = record.outputs[flavor]
            if not mine:
                record.outputs.pop(flavor)
            else:
                record.outputs[flavor] = Output(done.inputs, tuple(sorted({*done.paths, *mine})))

    def save(self, page: str | None) -> None:
        """Write the manifest (after every output), unless nothing was written."""
        if not self._built and page is None and self.records == self.old.decks:
            return
        manifest.save(self.out, Manifest(dict(self.records), self._page))


def _entry(entry: DeckEntry) -> Entry:
    head = entry.headmatter
    summary = head.get("summary", "")
    return Entry(
        entry.title,
        head.get("chapter"),
        summary if isinstance(summary, str) else str(summary),
        tuple((s.number, s.id, s.title, s.line) for s in entry.slides),
    )
