"""Slidev-style Markdown -> :class:`~slidegen.deck.nodes.Deck`.

Two steps, like Marpit: a pre-pass over lines cuts the file into slides (it tracks code
fences and HTML comments, and reads each slide's YAML frontmatter), then markdown-it-py
parses each slide's body and :mod:`slidegen.read.convert` turns the tokens into deck nodes.

Slide rules (Slidev's):

- A line starting with ``---`` at column 0, outside code fences and HTML comments,
  separates slides, whatever follows the dashes (``--- #part 2``, ``---<!-- x -->``: that
  text is dropped, as Slidev's parser drops it). After a separator whose fourth character
  is not a ``-``, followed by a non-blank line, the lines up to the next ``---`` line are
  the slide's YAML frontmatter; when no such line follows, they are content (Slidev would
  swallow the rest of the file). ``----`` never opens frontmatter. A slide without
  ``---`` frontmatter may start with a ```` ```yaml ```` block instead.
- The first slide's frontmatter is also the deck's headmatter (title, author, ...).
  Blank lines before the file's first separator do not make a slide; anything else between
  two separators does, even an empty slide.
- ``Slide.line`` is the line right after the separator, or after the frontmatter when
  there is one (its closing ``---`` or ```` ``` ````); slide 1 without headmatter is line 1.
- Notes are the slide's last HTML comment when only whitespace follows it.

References in text markdown-it does not tokenize (each top-level frontmatter string, the
notes as written) are found here too, at their file positions, so nothing after the parser
reads the source again. This module holds the project's one YAML frontmatter reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from markdown_it.token import Token

from slidegen.deck import background, clicks, settings
from slidegen.deck import nodes as d
from slidegen.deck.layouts import LAYOUTS
from slidegen.errors import SlidegenError
from slidegen.read import imports, toc
from slidegen.read.convert import Converter, nth_brace, raw_ref
from slidegen.read.mdplugins import markdown
from slidegen.read.mdplugins.refs import escape_ref_pipes, raw_refs
from slidegen.xmlchars import shape, xml_safe, xml_safe_data

__all__ = ["deck_to_json", "parse_deck", "parse_text"]

SEPARATOR_RE = re.compile(r"---.*")
FENCE_RE = re.compile(r"\s*(`{3,}|~{3,})(.*)")
YAML_FENCE_RE = re.compile(r"\s*```ya?ml\s*")
SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
BLANK_LINE_HINT = "if these lines are slide content, leave a blank line after the --- separator"


class _YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML that keeps dates as strings, so frontmatter stays plain JSON data."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class _Part:
    """One slide's lines, 0-based: frontmatter ``[fm[0], fm[1])`` and body ``[start, end)``."""

    fm: tuple[int, int] | None
    start: int
    end: int


@dataclass(frozen=True)
class _Front:
    """A slide's frontmatter, with its lines, to point errors at a key."""

    data: dict[str, Any]
    lines: list[str]
    first: int  # 0-based file line of the first YAML line

    def where(self, key: str) -> tuple[int, int]:
        """1-based (line, column) of ``key``'s value, or of the frontmatter's start."""
        pattern = re.compile(rf"{re.escape(key)}\s*:\s*")
        for row, text in enumerate(self.lines):
            match = pattern.match(text)
            if match:
                return self.first + row + 1, match.end() + 1
        return self.first + 1, 1


@dataclass(frozen=True)
class _Notes:
    """A slide's notes comment: its text, where it starts, and where the content stops."""

    text: str | None
    line: int  # 1-based line of ``<!--``
    text_line0: int  # 0-based file line where the trimmed text starts
    cut: tuple[int, int]  # (0-based file line, column) of ``<!--``
    text_col0: int = 0  # 0-based column where the trimmed text starts

    def at(self, offset: int) -> tuple[int, int]:
        """1-based file (line, col) of ``offset`` in the trimmed text."""
        text = self.text or ""
        row = text.count("\n", 0, offset)
        col = offset - text.rfind("\n", 0, offset) - 1 + (self.text_col0 if row == 0 else 0)
        return self.text_line0 + row + 1, col + 1


# ---------------------------------------------------------------------- public API


def parse_deck(path: Path) -> d.Deck:
    """Read and parse the deck at ``path``."""
    return parse_text(_read(Path(path), "the deck"), Path(path))


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise SlidegenError(path, line, 1, f"{what} is not UTF-8 text; save it as UTF-8") from None
    except OSError as exc:
        raise SlidegenError(path, 1, 1, f"cannot read {what}: {exc.strerror}") from None


def parse_text(text: str, path: Path) -> d.Deck:
    """Parse deck source ``text``; ``path`` names it in errors and becomes ``Deck.path``."""
    entry = _source(text, Path(path))
    head, _ = _front(entry.path, entry.lines, entry.parts[0])
    build = _Build(Path(path), _defaults(entry.path, head), {entry.path.resolve(): entry})
    for part in entry.parts:
        _expand(build, entry, part, _Inherit(), (entry.path.resolve(),))
    if not build.slides:
        raise SlidegenError(path, 1, 1, "the deck has no slides: its src: imports select none or are hidden")
    slides = build.slides
    headmatter = {k: v for k, v in head.data.items() if k != "src"}
    title = headmatter.get("title")
    deck_title = str(title) if title not in (None, "") else slides[0].title or Path(path).stem
    return toc.expand(d.Deck(Path(path), deck_title, headmatter, tuple(slides), tuple(build.sites)))


def deck_to_json(deck: d.Deck) -> dict[str, Any]:
    """The deck as JSON-ready data, for ``slidegen inspect --json`` and tests."""
    return {
        "title": deck.title,
        "headmatter": deck.headmatter,
        "slides": [
            {
                "index": s.index,
                "line": s.line,
                "layout": s.layout,
                "frontmatter": s.frontmatter,
                "title": s.title,
                "notes": s.notes,
                "content": s.content,
                "clicks": s.clicks,
                "id": s.id,
                **({"path": str(s.path)} if s.path else {}),  # an imported slide's file
            }
            for s in deck.slides
        ],
    }


# ---------------------------------------------------------------------- files and imports


@dataclass(frozen=True)
class _Source:
    """One Markdown file cut into slides: the deck, or a file a ``src:`` imports."""

    path: Path
    lines: list[str]
    parts: list[_Part]


def _source(text: str, path: Path) -> _Source:
    lines = xml_safe(text.removeprefix("\ufeff")).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return _Source(path, lines, _split(path, lines))


@dataclass(frozen=True)
class _Inherit:
    """Frontmatter a slide takes from elsewhere: headmatter ``defaults`` (below its own keys) and the
    slides that imported it (above them, Slidev's rule), with the references written in the latter."""

    above: dict[str, Any] = field(default_factory=dict)
    above_refs: dict[str, tuple[d.Ref, ...]] = field(default_factory=dict)


@dataclass
class _Build:
    """What one deck's parse collects: its slides, its import sites, the files read (by resolved path)."""

    deck: Path
    defaults: dict[str, Any]
    sources: dict[Path, _Source]
    slides: list[d.Slide] = field(default_factory=list)
    sites: list[d.ImportSite] = field(default_factory=list)


#: How many files deep ``src:`` imports may nest.
MAX_IMPORT_DEPTH = 20
#: How many slides a deck's imports may bring in all (imports of imports fan out).
MAX_IMPORTED_SLIDES = 5_000


def _defaults(path: Path, head: _Front) -> dict[str, Any]:
    """The headmatter's ``defaults:``, frontmatter every slide starts from."""
    value = head.data.get("defaults", {})
    if not isinstance(value, dict):
        raise SlidegenError(
            path,
            *head.where("defaults"),
            "defaults: must be a mapping of frontmatter keys every slide starts from, e.g. defaults: {layout: center}",
        )
    return {str(k): v for k, v in value.items()}


def _expand(build: _Build, source: _Source, part: _Part, inherit: _Inherit, chain: tuple[Path, ...]) -> None:
    """Add the slide ``part`` of ``source`` to ``build``, or, for ``src:``, the slides it imports."""
    front, body_start = _front(source.path, source.lines, part)
    if "src" not in front.data:
        index = len(build.slides) + 1
        build.slides.append(_slide(source, front, body_start, part.end, index, build, inherit))
        return
    at = {key: front.where(key) for key in front.data}
    line, col = at["src"]
    if imports.skipped(front.data):  # Slidev reads no file for a hidden import: nothing to check either
        build.sites.append(d.ImportSite(source.path, line, dict(front.data), at))
        return
    try:
        found = imports.target(front.data["src"], source.path, build.deck, line, col)
    except imports.ImportProblem as problem:
        raise SlidegenError(source.path, line, col, str(problem)) from None
    if found.path in chain:
        cycle = " -> ".join(p.name for p in (*chain[chain.index(found.path) :], found.path))
        raise SlidegenError(source.path, line, col, f"src: imports form a cycle ({cycle}); remove one of them")
    if len(chain) > MAX_IMPORT_DEPTH:
        raise SlidegenError(source.path, line, col, f"src: imports nest more than {MAX_IMPORT_DEPTH} files deep")
    sub = build.sources.get(found.path)
    if sub is None:
        shown = _display(found.path, build.deck)
        sub = build.sources[found.path] = _source(_read(shown, "the imported file"), shown)
    try:
        numbers = imports.pick(len(sub.parts), found.range)
    except imports.ImportProblem as problem:
        raise SlidegenError(source.path, line, col, str(problem)) from None
    if len(build.slides) + len(numbers) > MAX_IMPORTED_SLIDES:
        raise SlidegenError(
            source.path,
            line,
            col,
            f"src: imports bring the deck past {MAX_IMPORTED_SLIDES:,} "
            "slides; import fewer (a file imported twice brings its slides twice)",
        )
    build.sites.append(d.ImportSite(source.path, line, dict(front.data), at))
    own = {k: v for k, v in front.data.items() if k != "src"}
    refs = _frontmatter_refs(source.lines, own, at)
    merged = _Inherit({**own, **inherit.above}, {**refs, **inherit.above_refs})
    for number in numbers:
        _expand(build, sub, sub.parts[number - 1], merged, (*chain, found.path))


def _display(path: Path, deck: Path) -> Path:
    """An imported file's path as errors name it: relative to the deck's folder when the deck's path is."""
    if deck.is_absolute():
        return path
    try:
        return Path(deck.parent, path.relative_to(deck.resolve().parent))
    except ValueError:
        return path


# ---------------------------------------------------------------------- splitting


def _split(path: Path, lines: list[str]) -> list[_Part]:
    """Cut the file into slides at separators outside fences and comments."""
    parts: list[_Part] = []
    fm: tuple[int, int] | None = None
    start = 0
    fence: tuple[str, int] | None = None  # (marker, line) of an open code fence
    comment: int | None = None  # line of an open HTML comment
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence:
            fence = None if _closes_fence(line, fence[0]) else fence
        elif comment is not None:
            comment = _comment_state(line, i, comment)
        elif SEPARATOR_RE.fullmatch(line):
            if parts or start > 0 or any(text.strip() for text in lines[start:i]):
                parts.append(_Part(fm, start, i))
            fm, start = _frontmatter_range(lines, i)
            i = start
            continue
        elif (match := FENCE_RE.match(line)) and not (match[1][0] == "`" and "`" in match[2]):
            fence = (match[1], i)
        else:
            comment = _comment_state(line, i, None)
        i += 1
    if fence:
        col = lines[fence[1]].find(fence[0]) + 1
        raise SlidegenError(path, fence[1] + 1, col, f"unclosed code fence opened here; close it with {fence[0]}")
    if comment is not None:
        col = _blank_code_spans(lines[comment]).find("<!--") + 1
        raise SlidegenError(path, comment + 1, max(col, 1), "unclosed HTML comment opened here; close it with -->")
    parts.append(_Part(fm, start, len(lines)))
    return parts


def _frontmatter_range(lines: list[str], sep: int) -> tuple[tuple[int, int] | None, int]:
    """After the separator on line ``sep``: (frontmatter lines or None, first body line)."""
    if not lines[sep].startswith("----") and sep + 1 < len(lines) and lines[sep + 1].strip():
        for end in range(sep + 1, len(lines)):
            if lines[end].rstrip() == "---":
                return (sep + 1, end), end + 1
    return None, sep + 1


def _closes_fence(line: str, marker: str) -> bool:
    text = line.strip()
    return len(text) >= len(marker) and set(text) == {marker[0]}


def _comment_state(line: str, row: int, opened: int | None) -> int | None:
    """After ``line``: the line where a still-open HTML comment began, or None."""
    text = _blank_code_spans(line)
    pos = 0
    while True:
        if opened is None:
            at = text.find("<!--", pos)
            if at < 0:
                return None
            opened, pos = row, at + 4
        else:
            at = text.find("-->", pos)
            if at < 0:
                return opened
            opened, pos = None, at + 3


def _blank_code_spans(line: str) -> str:
    """``line`` with inline code spans blanked, so a `<!--` in code opens no comment."""
    out, pos = line, 0
    while (start := line.find("`", pos)) >= 0:
        run_end = start
        while run_end < len(line) and line[run_end] == "`":
            run_end += 1
        close = line.find(line[start:run_end], run_end)
        if close < 0:
            break
        pos = close + run_end - start
        out = out[:start] + " " * (pos - start) + out[pos:]
    return out


# ---------------------------------------------------------------------- frontmatter


def _front(path: Path, lines: list[str], part: _Part) -> tuple[_Front, int]:
    """The slide's frontmatter (``---`` or leading ```` ```yaml ````) and its first body line."""
    if part.fm:
        first, end = part.fm
        yaml_lines = lines[first:end]
        return _Front(_load_yaml(path, yaml_lines, first, dashed=True), yaml_lines, first), part.start
    k = part.start
    while k < part.end and not lines[k].strip():
        k += 1
    if k < part.end and YAML_FENCE_RE.fullmatch(lines[k]):
        for end in range(k + 1, part.end):
            if _closes_fence(lines[end], "```"):
                body = lines[k + 1 : end]
                return _Front(_load_yaml(path, body, k + 1, dashed=False), body, k + 1), end + 1
    return _Front({}, [], part.start), part.start


#: How deep a slide's frontmatter may nest lists and mappings (each writer walks it).
MAX_FRONTMATTER_NESTING = 20
#: How many values a slide's frontmatter may hold, YAML aliases expanded (each writer copies it).
MAX_FRONTMATTER_VALUES = 10_000


def _load_yaml(path: Path, lines: list[str], first: int, dashed: bool) -> dict[str, Any]:
    """Parse frontmatter lines starting at 0-based file line ``first``; must be a mapping."""
    hint = f"; {BLANK_LINE_HINT}" if dashed else ""
    try:
        data = yaml.load("\n".join(lines), Loader=_YamlLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        row, col = (mark.line, mark.column + 1) if mark else (0, 1)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        if row < len(lines) and "{{" in lines[row]:
            hint = '; quote values that hold references, e.g. title: "Loss {{ ch01.key }}"'
        message = f"malformed YAML in frontmatter: {problem}{hint}"
        raise SlidegenError(path, first + row + 1, col, message) from None
    if data is None and any(text.strip() for text in lines):
        raise SlidegenError(path, first + 1, 1, "frontmatter holds no keys, only comments" + hint)
    if data is not None and not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a string" if isinstance(data, str) else type(data).__name__
        raise SlidegenError(
            path, first + 1, 1, f"frontmatter must be a YAML mapping of key: value lines, not {kind}{hint}"
        )
    measured = shape(data)
    if measured is None:
        raise SlidegenError(path, first + 1, 1, "frontmatter holds itself (a YAML alias inside its own anchor)")
    if measured[0] > MAX_FRONTMATTER_NESTING:
        raise SlidegenError(
            path, first + 1, 1, f"frontmatter nests lists and mappings more than {MAX_FRONTMATTER_NESTING} levels deep"
        )
    if measured[1] > MAX_FRONTMATTER_VALUES:
        raise SlidegenError(
            path,
            first + 1,
            1,
            f"frontmatter holds more than {MAX_FRONTMATTER_VALUES:,} values once its YAML aliases are expanded",
        )
    return xml_safe_data(data or {})  # type: ignore[return-value]


# ---------------------------------------------------------------------- slides


def _slide(
    source: _Source, own: _Front, body_start: int, end: int, index: int, build: _Build, inherit: _Inherit
) -> d.Slide:
    path, lines, before = source.path, source.lines, build.slides
    front = _Front({**build.defaults, **own.data, **inherit.above}, own.lines, own.first)
    for key, message in settings.problems(front.data):
        raise SlidegenError(path, *own.where(key), message)
    try:
        background.parse(front.data.get("background"))
    except background.BackgroundProblem as problem:
        raise SlidegenError(path, *own.where("background"), str(problem)) from None
    body = lines[body_start:end]
    tokens = _tokens("\n".join(body))
    conv = Converter(path, lines, body_start)
    layout = _layout(path, front, index)
    tokens, footnote_tokens = _split_footnotes(tokens)
    default, slots = _slots(conv, tokens, layout)
    blocks = conv.blocks(default)
    slot_blocks = {name: conv.blocks(group) for name, group in slots.items()}
    notes = _notes(tokens, lines, body_start, end)
    notes_blocks: tuple[d.Block, ...] = ()
    if notes and notes.text:
        notes_conv = Converter(path, lines, notes.text_line0)
        notes_blocks = notes_conv.blocks([t for t in _tokens(notes.text) if t.type != "slot"])
    title, title_heading, title_inlines = _title(front.data, blocks)
    at = {key: own.where(key) for key in own.data}
    notes_refs: tuple[d.Ref, ...] = ()
    if notes and notes.text:
        notes_refs = tuple(raw_ref(found, notes.at(found.start), 0) for found in raw_refs(notes.text, "markdown"))
    slide = d.Slide(
        index=index,
        line=body_start + 1,
        layout=layout,
        frontmatter=dict(front.data),
        title=title,
        content=_content(lines, body_start, end, notes),
        blocks=blocks,
        slots=slot_blocks,
        notes=notes.text if notes else None,
        notes_blocks=notes_blocks,
        notes_line=notes.line if notes and notes.text else 0,
        id=_slide_id(path, front, before),
        title_heading=title_heading,
        title_inlines=title_inlines,
        frontmatter_refs={**_frontmatter_refs(lines, own.data, at), **inherit.above_refs},
        frontmatter_at=at,
        notes_refs=notes_refs,
        footnotes=conv.footnotes(footnote_tokens),
        path=None if path == build.deck else path,
    )
    try:
        return clicks.resolve(slide)  # the click timeline (and total) as Slidev resolves it
    except clicks.AtError as exc:
        raise SlidegenError(path, exc.line or slide.line, 1, str(exc)) from None


def _split_footnotes(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    """(the body's tokens, the footnote block's): markdown-it puts a slide's footnotes after its body."""
    for i, token in enumerate(tokens):
        if token.type == "footnote_block_open":
            return tokens[:i], tokens[i:]
    return tokens, []


def _frontmatter_refs(
    lines: list[str], data: dict[str, Any], at: dict[str, tuple[int, int]]
) -> dict[str, tuple[d.Ref, ...]]:
    """The references in each top-level string value, located by counting ``{{`` from the value's start."""
    out: dict[str, tuple[d.Ref, ...]] = {}
    for key, value in data.items():
        if not isinstance(value, str) or "{{" not in value:
            continue
        line, col = at[key]
        refs = []
        for found in raw_refs(value, "plain"):
            braces = found.start + (1 if found.escaped else 0)
            row, column = nth_brace(lines, line - 1, col - 1, value.count("{{", 0, braces))
            refs.append(raw_ref(found, (row, column - (1 if found.escaped else 0)), 0))
        out[key] = tuple(refs)
    return out


#: A GFM table's delimiter row: ``|---|:--:|`` (pipes at the ends optional).
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _tokens(text: str) -> list[Token]:
    """Parse with markdown-it.

    GFM splits table cells at every unescaped ``|``, even inside ``{{ key | filter }}``; when
    a table row holds such a reference, its pipes are escaped and the text parsed again.
    """
    md = markdown()
    if "{{" not in text:
        return md.parse(text)
    rows = text.split("\n")
    # a header row whose reference splits it into more cells than its delimiter row is no
    # table at all to GFM, so header rows are escaped before the first parse
    for k in range(len(rows) - 1):
        if "{{" in rows[k] and "|" in rows[k + 1] and _DELIMITER_ROW.match(rows[k + 1]):
            rows[k] = escape_ref_pipes(rows[k])
    text = "\n".join(rows)
    tokens = md.parse(text)
    if not any(t.type == "table_open" for t in tokens):
        return tokens
    for token in tokens:
        if token.type == "table_open" and token.map:
            for k in range(*token.map):
                rows[k] = escape_ref_pipes(rows[k])
    protected = "\n".join(rows)
    return md.parse(protected) if protected != text else tokens


def _layout(path: Path, front: _Front, index: int) -> str:
    layout = front.data.get("layout", "cover" if index == 1 else "default")
    spec = LAYOUTS.get(layout) if isinstance(layout, str) else None
    if spec is None:
        line, col = front.where("layout")
        known = ", ".join(LAYOUTS)
        raise SlidegenError(path, line, col, f"unknown layout '{layout}' (known: {known})")
    if spec.image and not front.data.get("image"):
        line, col = front.where("layout")
        raise SlidegenError(
            path,
            line,
            col,
            f"layout '{layout}' needs an image: key naming the picture (a path relative to the deck, or fig:NAME)",
        )
    if spec.frame and not isinstance(front.data.get("url"), str):
        line, col = front.where("layout")
        raise SlidegenError(
            path, line, col, f"layout '{layout}' needs a url: key naming the web page it shows (https://...)"
        )
    return str(layout)


def _slots(conv: Converter, tokens: list[Token], layout: str) -> tuple[list[Token], dict[str, list[Token]]]:
    """Split top-level tokens at ``::name::`` markers: (default slot, named slots).

    ``::default::`` switches back to the default slot (Slidev's slot sugar); each slot is named once.
    """
    allowed = LAYOUTS[layout].slot_names
    groups: dict[str, list[Token]] = {"": []}
    current = ""
    named_default = False
    for token in tokens:
        if token.type != "slot" or token.level != 0:
            groups[current].append(token)
            continue
        name, line = token.meta["name"], conv.line_of(token)
        col = conv.lines[line - 1].find("::") + 1
        if name == "default":
            if named_default:
                raise conv.error(line, col, "slot '::default::' appears twice on this slide; keep one")
            named_default, current = True, ""
            continue
        if name not in allowed:
            takes = "; ".join(
                f"{spec.name} takes " + ", ".join(f"::{s}::" for s in spec.slot_names)
                for spec in LAYOUTS.values()
                if spec.slot_names
            )
            raise conv.error(line, col, f"unknown slot '::{name}::' for layout '{layout}' ({takes})")
        if name in groups:
            raise conv.error(line, col, f"slot '::{name}::' appears twice on this slide; keep one")
        groups[name], current = [], name
    default = groups.pop("")
    return default, {name: groups[name] for name in allowed if name in groups}


def _notes(tokens: list[Token], lines: list[str], start: int, end: int) -> _Notes | None:
    """The slide's last HTML comment, when only whitespace follows it (Slidev's rule)."""
    text = "\n".join(lines[start:end]).rstrip()
    if not text.endswith("-->") or not _ends_in_comment(tokens):
        return None
    at = text.rfind("<!--", 0, len(text) - 3)
    if at < 0:
        return None
    inner = text[at + 4 : -3]
    text_at = at + 4 + len(inner) - len(inner.lstrip())
    row = start + text.count("\n", 0, at)
    col = at - text.rfind("\n", 0, at) - 1
    text_col = text_at - text.rfind("\n", 0, text_at) - 1
    return _Notes(inner.strip() or None, row + 1, start + text.count("\n", 0, text_at), (row, col), text_col)


def _ends_in_comment(tokens: list[Token]) -> bool:
    """Whether markdown-it saw the end of the slide as an HTML comment (not code or text)."""
    last = next((t for t in reversed(tokens) if t.nesting != -1), None)
    if last is not None and last.type == "inline" and last.children:
        last = last.children[-1]
        return last.type == "html_inline" and last.content.startswith("<!--")
    return last is not None and last.type == "html_block"


def _content(lines: list[str], start: int, end: int, notes: _Notes | None) -> str:
    """The body's Markdown without notes, without leading and trailing blank lines."""
    if notes:
        row, col = notes.cut
        text = lines[start:row] + [lines[row][:col].rstrip()]
    else:
        text = lines[start:end]
    while text and not text[0].strip():
        text.pop(0)
    while text and not text[-1].strip():
        text.pop()
    return "\n".join(text)


def _title(fm: dict[str, Any], blocks: tuple[d.Block, ...]) -> tuple[str, int | None, tuple[d.Inline, ...]]:
    """(title, index of the title heading in blocks, its inlines).

    A frontmatter ``title`` wins; when it equals the first heading's text (a cover slide
    whose headmatter repeats its heading), that heading is still marked as the title.
    """
    first = next(((i, b) for i, b in enumerate(blocks) if isinstance(b, d.Heading)), None)
    text = d.plain_text(first[1].children).strip() if first else ""
    if fm.get("title") is not None and str(fm["title"]) != text:
        return str(fm["title"]), None, ()
    if first is None:
        return "", None, ()
    return text, first[0], first[1].children


def _slide_id(path: Path, front: _Front, before: list[d.Slide]) -> str | None:
    value = front.data.get("id")
    if value is None:
        return None
    line, col = front.where("id")
    slide_id = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not SLUG_RE.fullmatch(slide_id):
        raise SlidegenError(
            path,
            line,
            col,
            f"slide id '{value}' is not a slug: use lowercase "
            "letters, digits and '-', starting with a letter or digit (e.g. loss-curve)",
        )
    for other in before:
        if other.id == slide_id:
            raise SlidegenError(
                path,
                line,
                col,
                f"duplicate slide id '{slide_id}': slide {other.index} "
                f"(line {other.line}) has it already; ids must be unique in a deck",
            )
    return slide_id
