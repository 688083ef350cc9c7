"""The CI lint (``slidegen check``).

:func:`check_project` reads every deck once (:mod:`slidegen.pipeline.index`) and results.md, and
returns each problem as a :class:`~slidegen.errors.Diagnostic`, sorted by file, line and
column, paths relative to the project root. Errors fail CI; warnings (results no slide
cites) do not. The checks themselves read no file: positions come from the parsed decks,
links between decks resolve through the :class:`~slidegen.deck.nodes.DeckIndex`.

Stale results are reported once per experiment, at its first stale row in
``results/results.md``, with the number of its keys and the first slide citing them. The
environment an experiment ran under (results.md's ``runs`` section) differing from today's
is a warning, once per experiment (an error with ``--strict-env``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen.bind.library import Library, load_library
from slidegen.bind.numbers import bind_deck
from slidegen.check import fallbacks
from slidegen.check import type_size as check_type
from slidegen.check import words as check_words
from slidegen.check.cites import check_cited_rows, check_deck_cites, check_library, check_unused
from slidegen.check.glossary import glossary_problems
from slidegen.check.outputs import output_problems
from slidegen.deck import builtins as slidev_builtins
from slidegen.deck import links, settings
from slidegen.deck.nodes import (
    Block,
    Deck,
    DeckIndex,
    Figure,
    Heading,
    Image,
    Link,
    Text,
    block_inlines,
    walk_blocks,
    walk_inlines,
)
from slidegen.errors import Diagnostic, SlidegenError, display_path
from slidegen.media import components
from slidegen.paths import in_project
from slidegen.pipeline.index import Decks, citations, index_of, project_decks, slide_finder
from slidegen.read.frontmatter import key_warnings, visible
from slidegen.read.imports import by_file
from slidegen.record.discover import same_fingerprint
from slidegen.record.results import RESULTS_PATH, RUN_COLUMNS, Result, Results
from slidegen.record.runstore import RunRecord, run_path
from slidegen.write import htmlpictures

if TYPE_CHECKING:
    from slidegen.record.discover import ExperimentInfo

RUNS_DIR = "results/runs"

#: A number as typed: 2,000 / 2.31 / 1e-3 / 37%.
_NUMBER_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?%?")
#: A heading's own number: "01", "Chapter 3", "3.2".
_CHAPTER_NUMBER_RE = re.compile(r"\s*(?:(?:chapter|ch\.?|part|section|§)\s*)?\d+(?:\.\d+)*", re.IGNORECASE)


def check_project(
    root: Path,
    strict: bool = False,
    fingerprints: Fingerprints | None = None,
    figure_names: Collection[str] | None = None,
    *,
    environment: Mapping[str, str] | None = None,
    strict_env: bool = False,
    verbose: bool = False,
) -> list[Diagnostic]:
    """Every problem in the project's decks and results.md.

    ``fingerprints`` maps each registered experiment id to its fingerprint today, or to its
    :class:`~slidegen.record.discover.ExperimentInfo`; None skips the staleness check. ``figure_names`` lists the
    registered
    figures (None skips the figure check); ``strict`` also flags numbers typed by hand. For
    ``environment``, ``strict_env`` and ``verbose`` see :func:`check_decks`.
    """
    root = Path(root)
    diagnostics: list[Diagnostic] = []
    results: Results | None = Results()
    try:
        results = Results.read(root / RESULTS_PATH)
    except FileNotFoundError:
        pass
    except SlidegenError as e:
        diagnostics.append(e.diagnostic)
        results = None

    decks = project_decks(root)
    diagnostics += check_decks(
        decks,
        results,
        strict,
        fingerprints,
        figure_names,
        root,
        load_library(root),
        environment=environment,
        strict_env=strict_env,
        verbose=verbose,
    )
    out = {_relative(root, d): None for d in diagnostics}
    return sorted(out, key=lambda d: (d.path, d.line, d.col))


def check_decks(
    decks: Decks,
    results: Results | None,
    strict: bool = False,
    fingerprints: Fingerprints | None = None,
    figure_names: Collection[str] | None = None,
    root: Path = Path("."),
    library: Library | None = None,
    *,
    environment: Mapping[str, str] | None = None,
    strict_env: bool = False,
    verbose: bool = False,
) -> list[Diagnostic]:
    """The problems of decks read once: parse errors, binding, links (through the index), figures, numbers, results,
    and citations (``library``: the project's works, styles and cited numbers; None skips those checks).

    ``results`` is None when results.md itself did not read (its error is reported by the caller).
    ``environment`` (today's Python, NumPy and torch versions) turns on the environment warnings
    (errors with ``strict_env``); ``verbose`` lists every result no slide cites instead of one summary.
    """
    diagnostics = list(decks.errors)
    index = decks.index
    shown = index_of(visible(deck) for deck in decks.parsed.values())  # what the build writes and links to
    deck_files = {path.name for path in decks.paths}
    bound: list[Deck] = []
    found = components.discover(root)
    diagnostics += components.file_problems(found, root)
    for deck in decks.parsed.values():
        rel = f"decks/{deck.path.name}"
        if results is not None:
            deck, problems = bind_deck(deck, results)
            diagnostics += problems
            bound.append(deck)
            diagnostics += output_problems(deck, root)  # what the writers would stop on
        for where, part in by_file(deck):  # an imported slide's problems name its own file
            here = rel if where == deck.path else display_path(where)
            diagnostics += components.deck_problems(part, found, here)
            runs_dir = root / "results" / "runs"
            diagnostics += [
                Diagnostic(here, line, 1, f"component data: {problem}")
                for run, line in components.run_refs(part)
                if (problem := components.run_problem(run, runs_dir))
            ]
            diagnostics += _check_links(here, part, deck_files, index, shown)
            diagnostics += key_warnings(here, part, deck)
            diagnostics += htmlpictures.network_warnings(here, part)
            diagnostics += fallbacks.warnings(here, part)
            diagnostics += slidev_builtins.warnings(here, part)
            if figure_names is not None:
                diagnostics += _check_figures(here, part, figure_names)
            if strict:
                diagnostics += _check_numbers(here, part)
        diagnostics += settings.pptx_font_warnings(rel, _headmatter_line(deck, "fonts"), deck.headmatter.get("fonts"))
        diagnostics += check_words.warnings(rel, deck)
        diagnostics += check_type.warnings(rel, deck)
    diagnostics += _check_diagrams(list(decks.parsed.values()), root)
    diagnostics += glossary_problems(visible(deck) for deck in decks.parsed.values())
    if library is not None:
        diagnostics += check_library(library)
        diagnostics += check_deck_cites(bound, library)
        if results is not None and library.cited.exists:
            diagnostics += check_cited_rows(library, results)
            diagnostics += check_unused(bound, library, complete=not decks.errors)
    if results is not None:
        cited = citations(decks.parsed.values(), root)
        if fingerprints is not None:
            recorded = {**_run_versions(root, fingerprints), **{e: run.versions for e, run in results.runs.items()}}
            slide_of = slide_finder(decks.parsed.values(), root)
            diagnostics += _check_stale(
                results, fingerprints, cited, slide_of, environment, recorded, strict_env, _changed_since_run(root)
            )
        if not decks.errors:  # a deck that did not parse may cite anything
            diagnostics += _uncited(results, cited, library, verbose)
    return diagnostics


def _headmatter_line(deck: Deck, key: str) -> int:
    """The line of headmatter ``key`` in the deck's file (1 when the first slide is imported or lacks it)."""
    first = deck.slides[0]
    return first.frontmatter_at[key][0] if first.path is None and key in first.frontmatter_at else 1


def _slide_file(deck: Deck, number: int) -> str:
    """The file slide ``number`` of ``deck`` is written in, as ``check`` names it (an imported slide: its own)."""
    path = deck.slide_path(deck.slides[number - 1])
    return f"decks/{deck.path.name}" if path == deck.path else display_path(path)


def _check_diagrams(decks: list[Deck], root: Path) -> list[Diagnostic]:
    """Every Mermaid diagram must parse (Mermaid's own parser, in Chromium; parsed texts are remembered in
    ``build/cache/mermaid``, so an unchanged project is checked without a browser)."""
    from slidegen.media import mermaid
    from slidegen.media.assets import AssetsMissing
    from slidegen.write import snapshot
    from slidegen.write.pdf import ChromiumMissing

    found = [(_slide_file(deck, number), block) for deck in decks for block, number in components.diagrams(deck)]
    if not found:
        return []
    try:
        failed = snapshot.parse_problems([block.code for _, block in found], root / "build" / "cache" / "mermaid")
    except (ChromiumMissing, AssetsMissing) as error:
        rel, block = found[0]
        return [Diagnostic(rel, block.line, 1, f"Mermaid diagrams not checked: {error}", "warning")]
    out = []
    for rel, block in found:
        if block.code in failed:
            message = failed[block.code]
            out.append(
                Diagnostic(
                    rel,
                    mermaid.error_line(message, block.line),
                    1,
                    f"Mermaid cannot parse this diagram: {mermaid.first_line(message)}",
                )
            )
    return out


SlideOf = Callable[[str, int], "int | None"]


def _run_versions(root: Path, experiments: Iterable[str]) -> dict[str, dict[str, str]]:
    """The versions each experiment's ``results/runs/<id>.json`` recorded (for rows from before the runs table)."""
    out = {}
    for exp_id in experiments:
        record = RunRecord.read(run_path(root / RUNS_DIR, exp_id))
        if record is not None and record.versions:
            out[exp_id] = {k: str(v) for k, v in record.versions.items()}
    return out


def _relative(root: Path, d: Diagnostic) -> Diagnostic:
    """``d`` with its path as the project names it (``decks/01-x.md``); as it was when outside the project."""
    rel = in_project(d.path, root)
    return d if rel is None else Diagnostic(rel, d.line, d.col, d.message, d.severity)


def _all_blocks(deck: Deck) -> Iterator[tuple[Block, bool]]:
    """Every block of every slide, notes included, with ``True`` for notes blocks."""
    for slide in deck.slides:
        for blocks in (slide.blocks, *slide.slots.values()):
            for block in walk_blocks(blocks):
                yield block, False
        for block in walk_blocks(slide.notes_blocks):
            yield block, True


def _inlines(block: Block) -> Iterator[Text | Link | Image]:
    """The text runs, links and images of one block (table cells and nested spans included)."""
    for node in walk_inlines(block_inlines(block)):
        if isinstance(node, (Text, Link, Image)):
            yield node


def _did_you_mean(word: str, choices: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_links(rel: str, deck: Deck, deck_files: set[str], index: DeckIndex, shown: DeckIndex) -> list[Diagnostic]:
    """Links to ``NN-x.md`` and ``NN-x.md#id`` (or ``#id``) must name a deck file, and a slide id the index knows
    on a slide the build writes (``shown``: hidden slides left out)."""
    out: list[Diagnostic] = []
    for block, _ in _all_blocks(deck):
        for node in _inlines(block):
            if not isinstance(node, Link):
                continue
            to = links.target(node.url)
            if to.external or node.url.startswith("/"):
                continue
            target, fragment = to.path, to.fragment
            name = Path(target).name if target else deck.path.name
            if target and not target.endswith(".md"):
                continue
            entry = index.deck(name)
            if name not in deck_files:
                message = f"link to unknown deck '{target}'{_did_you_mean(name, deck_files)}"
                out.append(Diagnostic(rel, *node.target_at, message))
            elif fragment and entry is not None and entry.slide(fragment) is None:
                hint = _did_you_mean(fragment, [s.id for s in entry.slides if s.id])
                out.append(Diagnostic(rel, *node.target_at, f"link to unknown slide id '{fragment}' in {name}{hint}"))
            elif fragment and entry is not None and (written := shown.deck(name)) and written.slide(fragment) is None:
                out.append(
                    Diagnostic(
                        rel,
                        *node.target_at,
                        f"link to slide '{fragment}' in {name}, which is hidden "
                        "(hide: true) and not in any output; show it or drop the link",
                    )
                )
    return out


def _check_figures(rel: str, deck: Deck, names: Collection[str]) -> list[Diagnostic]:
    """``fig:NAME`` in images, figures and frontmatter (``image: fig:NAME``) must name a registered figure."""
    images: list[tuple[str, tuple[int, int]]] = []
    for slide in deck.slides:
        images += [
            (v, slide.frontmatter_at.get(k, (slide.line, 1)))
            for k, v in slide.frontmatter.items()
            if isinstance(v, str)
        ]
    images += [(src, (line, 1)) for src, line in components.fallbacks(deck)]  # fallback="fig:NAME"
    for block, _ in _all_blocks(deck):
        images += [(block.src, block.target_at)] if isinstance(block, Figure) else []
        images += [(n.src, n.target_at) for n in _inlines(block) if isinstance(n, Image)]
    out: list[Diagnostic] = []
    for src, at in images:
        name = src[4:]
        if src.startswith("fig:") and name not in names:
            out.append(Diagnostic(rel, *at, f"unknown figure '{name}'{_did_you_mean(name, names)}"))
    return out


# ---------------------------------------------------------------------- strict: numbers typed by hand


_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    "oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
#: What makes a following four-digit number a year: a time word, a month (and day), or a citation's author.
_YEAR_BEFORE_RE = re.compile(
    r"(?:(?i:\b(?:in|since|until|till|from|by|before|after|during|circa|ca\.|c\.|year|" + _MONTHS + r")\.?"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?,?)?)"  # in / since / March / March 3, / Mar. 3rd
    r"|(?i:\b\d{1,2}(?:st|nd|rd|th)?\s+(?:" + _MONTHS + r")\.?)"  # 3 March
    r"|\bet al\.,?"  # Kaplan et al. 2020, Kaplan et al., 2020
    r"|\(\s*[A-Z][\w'’-]+(?:\s+(?:and|&)\s+[A-Z][\w'’-]+)?,?"  # (Kaplan 2020), (Kaplan and Smith, 2020)
    r"|\b[A-Z][\w'’-]+\s+\("  # Kaplan (2020)
    r")\s*$"
)
#: Between two years of one list or range: 2019 and 2020, 2019–2021, 2019, 2020.
_YEAR_LIST_RE = re.compile(r"\s*(?:,|and|or|to|&|/|-|–|—)\s*")
#: A date: 2020-01-31 or 2020-01.
_ISO_DATE_RE = re.compile(r"\b(?:19|20)\d{2}-[01]\d(?:-[0-3]\d)?\b")
#: Words that make the number before them a count, never a year ("in 2000 steps").
_COUNTED_RE = re.compile(
    r"\s+(?i:steps?|tokens?|parameters?|params|seeds?|runs?|epochs?|iterations?|updates?|examples?|samples?|"
    r"characters?|chars|words?|layers?|heads?|batch(?:es)?|sequences?|documents?|lines?|rows?|points?|times|"
    r"gpus?|tpus?|cores?|hours?|minutes?|seconds?|ms|days?|nats|bits|bytes|[kmgt]b|flops?)\b"
)


def hand_typed_numbers(text: str, heading: bool = False, years: bool = False) -> list[tuple[int, str]]:
    """``(offset, number)`` of every measured-looking number typed in ``text``.

    Flagged: decimals (2.31), percentages (37%), numbers in scientific notation and any
    other number of two or more digits (42, 2,000). Not flagged: single digits; numbers
    glued to letters, directly or by a hyphen (FP8, GPT-3, 7B, H100, 16-bit,
    arXiv:1412.6980) except a multiplier ``x`` (2.5x is flagged); section signs (§5.1);
    when ``heading``, the heading's own number at its start (``01 Training``); and a year
    (1900-2099, four plain digits) only where it reads as one: after a time word (in,
    since, until, from, by, before, after, during, circa), a month or a day and month
    (March 2020, 3 March 2020, March 3, 2020), in a citation (Kaplan et al. 2020,
    (Kaplan 2020), (Kaplan and Smith, 2020), Kaplan (2020)), in a date (2020-01-31), in a
    list or range after such a year (in 2017 and 2019, since 2019–2021), or anywhere in a
    heading (``heading``, or ``years`` for the heading's later text runs). A number followed
    by a counted word (steps, tokens, seeds, epochs, ...) is never a year: "in 2000 steps" is
    flagged.
    """
    skip = 0
    if heading and (m := _CHAPTER_NUMBER_RE.match(text)):
        skip = m.end()
    dates = [range(m.start(), m.end()) for m in _ISO_DATE_RE.finditer(text)]
    found: list[tuple[int, str]] = []
    last_year = -1  # where the previous year ended, for lists and ranges of years
    for m in _NUMBER_RE.finditer(text):
        start, end, number = m.start(), m.end(), m.group()
        before = text[start - 1] if start else ""
        before2 = text[start - 2] if start > 1 else ""
        after = text[end] if end < len(text) else ""
        after2 = text[end + 1] if end + 1 < len(text) else ""
        if start < skip or before == "§" or before.isalpha() or (before == "." and before2.isdigit()):
            continue
        if before in "-:" and before2.isalpha():
            continue
        if (after.isalpha() and after != "x") or (after == "x" and after2.isalpha()):
            continue
        if after == "-" and after2.isalpha() and not number.endswith("%"):
            continue
        if number.isdigit() and len(number) < 2:
            continue
        if any(start in date for date in dates):
            continue
        if number.isdigit() and len(number) == 4 and 1900 <= int(number) <= 2099 and not _COUNTED_RE.match(text, end):
            listed = last_year >= 0 and _YEAR_LIST_RE.fullmatch(text, last_year, start) is not None
            if heading or years or listed or _YEAR_BEFORE_RE.search(text[max(0, start - 60) : start]):
                last_year = end
                continue
        found.append((start, number))
    return found


def _check_numbers(rel: str, deck: Deck) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for block, in_notes in _all_blocks(deck):
        first = block.children[0] if isinstance(block, Heading) and block.children else None
        for node in _inlines(block):
            if not isinstance(node, Text):
                continue
            where = "speaker notes" if in_notes else "slide text"
            years = isinstance(block, Heading)  # a heading names a period anywhere in it
            for offset, number in hand_typed_numbers(node.text, heading=node is first, years=years):
                message = (
                    f"hand-typed number '{number}' in {where}: cite a result ({{{{ key }}}}) "
                    f'or mark it as a literal ({{{{ "{number}" }}}})'
                )
                out.append(Diagnostic(rel, node.line, node.col + offset, message))
    return out


# ---------------------------------------------------------------------- stale results

#: What the staleness check compares a row with: today's fingerprint, or the experiment that has it.
Fingerprints = Mapping[str, "str | ExperimentInfo"]


def _first_site(keys: Sequence[str], cited: Mapping[str, list[tuple[str, int]]], slide_of: SlideOf) -> str:
    """``cited by decks/01-x.md:12, slide 3`` (``first cited by`` when several sites), or ``cited by no slide``."""
    sites = [site for key in keys for site in cited.get(key, [])]
    if not sites:
        return "cited by no slide"
    path, line = min(sites)
    number = slide_of(path, line)
    return ("first " if len(sites) > 1 else "") + f"cited by {path}:{line}" + (f", slide {number}" if number else "")


def _changed_since_run(root: Path) -> Callable[[str], list[str]]:
    """``experiment -> [path:name, ...]``: what it reaches today that its last run did not (by name and
    text, so a definition that only moved is not listed); today's source is read once, when first asked."""
    today: dict[str, dict[str, str]] = {}

    def changed(experiment: str) -> list[str]:
        record = RunRecord.read(run_path(root / RUNS_DIR, experiment))
        if record is None or not record.files:
            return []
        if not today:
            from slidegen.project import Project
            from slidegen.record.discover import fingerprints

            try:
                today.update({exp_id: fp.files for exp_id, fp in fingerprints(Project(root)).items()})
            except SlidegenError:
                return []
        then = {(name.split(":", 1)[-1], digest) for name, digest in record.files.items()}
        return [
            name for name, digest in today.get(experiment, {}).items() if (name.split(":", 1)[-1], digest) not in then
        ]

    return changed


def _check_stale(
    results: Results,
    fingerprints: Fingerprints,
    cited: Mapping[str, list[tuple[str, int]]],
    slide_of: SlideOf = lambda path, line: None,
    environment: Mapping[str, str] | None = None,
    recorded: Mapping[str, Mapping[str, str]] | None = None,
    strict_env: bool = False,
    changed: Callable[[str], list[str]] = lambda experiment: [],
) -> list[Diagnostic]:
    """Stale and orphaned results, once per experiment, at its first row; environment warnings likewise.

    ``changed`` names what an experiment reaches that changed since its last run (said with a stale row).

    ``recorded`` maps an experiment to the versions its last run recorded (results.md's
    ``runs`` section wins over ``runs/<id>.json``); with ``environment`` (today's versions),
    an experiment whose recorded versions differ gets one warning (an error with
    ``strict_env``).
    """
    rows: dict[str, list[tuple[str, Result]]] = {}
    for key, r in results.items():
        if r.experiment is not None and r.fingerprint is not None:
            rows.setdefault(r.experiment, []).append((key, r))
    recorded = recorded or {}
    out: list[Diagnostic] = []
    for experiment, its_rows in rows.items():
        first_key, first = its_rows[0]
        keys = [key for key, _ in its_rows]
        if experiment not in fingerprints:
            hint = _did_you_mean(experiment, fingerprints)
            what = f"result '{first_key}' comes" if len(keys) == 1 else f"{len(keys)} results ('{first_key}', ...) come"
            out.append(
                Diagnostic(
                    RESULTS_PATH, first.line, 1, f"{what} from experiment '{experiment}', which no longer exists{hint}"
                )
            )
            continue
        known = fingerprints[experiment]
        current = known if isinstance(known, str) else known.fingerprint
        versions = recorded.get(experiment)
        stale = [(key, r) for key, r in its_rows if not same_fingerprint(r.fingerprint or "", current)]
        if stale:
            stale_keys = [key for key, _ in stale]
            was = sorted({r.fingerprint or "" for _, r in stale})
            shown = current[: len(was[0])]
            what = (
                f"stale result '{stale_keys[0]}'"
                if len(stale) == 1
                else f"{len(stale)} stale results of {experiment} ('{stale_keys[0]}', ...)"
            )
            names = changed(experiment)
            since = (
                (
                    f" ({', '.join(names[:3])}{f' and {len(names) - 3} more' if len(names) > 3 else ''} changed "
                    "since it ran)"
                )
                if names
                else ""
            )
            out.append(
                Diagnostic(
                    RESULTS_PATH,
                    stale[0][1].line,
                    1,
                    f"{what}: recorded by {experiment} {', '.join(was)}, whose fingerprint is now {shown}{since}; "
                    f"run `slidegen run {experiment}` ({_first_site(stale_keys, cited, slide_of)})",
                )
            )
            continue
        if environment is None or versions is None:
            continue
        # a library not installed here ("none": building decks needs no torch) cannot confirm anything
        differs = [
            name
            for name in RUN_COLUMNS[2:]
            if versions.get(name)
            and environment.get(name) not in (None, "", "none")
            and _release(versions[name]) != _release(environment[name])
        ]
        if differs:
            then = " / ".join(f"{_LABELS[n]} {versions.get(n) or '?'}" for n in RUN_COLUMNS[2:])
            now = " / ".join(f"{_LABELS[n]} {environment.get(n) or '?'}" for n in RUN_COLUMNS[2:])
            line = results.runs[experiment].line if experiment in results.runs else first.line
            out.append(
                Diagnostic(
                    RESULTS_PATH,
                    line or first.line,
                    1,
                    f"{experiment} ran under {then}; this environment has {now}; rerun to confirm "
                    f"(`slidegen run {experiment} --force`; {len(keys)} key(s))",
                    "error" if strict_env else "warning",
                )
            )
    return out


_LABELS = {"python": "Python", "numpy": "NumPy", "torch": "torch"}


def _release(version: str) -> str:
    """A version without its local build tag: ``2.13.0+cpu`` is ``2.13.0``."""
    return version.split("+", 1)[0]


# ---------------------------------------------------------------------- results no slide cites


def _uncited(results: Results, cited: Mapping[str, object], library: Library | None, verbose: bool) -> list[Diagnostic]:
    """Rows no slide cites: one summary warning at the first, or one warning per row with ``verbose``."""
    rows = [
        (key, r)
        for key, r in results.items()
        if key not in cited and not (r.cited and library is not None and library.cited.exists)
    ]
    # a cited number no slide shows is reported once, at its line in the cited-numbers file
    if verbose or len(rows) == 1:
        return [
            Diagnostic(RESULTS_PATH, r.line, 1, f"result '{key}' is not cited by any slide", "warning")
            for key, r in rows
        ]
    if not rows:
        return []
    names = ", ".join(key for key, _ in rows[:3]) + (", ..." if len(rows) > 3 else "")
    return [
        Diagnostic(
            RESULTS_PATH,
            rows[0][1].line,
            1,
            f"{len(rows)} results are not cited by any slide ({names}); `slidegen check -v` lists them",
            "warning",
        )
    ]
