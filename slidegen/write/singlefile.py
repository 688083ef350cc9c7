"""``slidegen build --single-file``: each deck's HTML page made one self-contained file.

The page the HTML writer wrote loads its scripts, styles, fonts and pictures from ``assets/``
and ``media/`` beside it. :func:`inline_page` puts every such file into the page itself as a
``data:`` URL: scripts as ``<script src="data:...">`` (their text is never pasted between
``<script>`` tags, so no ``</script>`` inside one can end it early), stylesheets as ``<link
href="data:...">`` with the ``url(...)`` inside them (KaTeX's fonts) inlined first, pictures
(``<img src>``, reveal's ``data-background-image``, ``url(...)`` in ``style`` attributes and
``<style>`` blocks) as they are. The page then opens from disk, offline, anywhere; the speaker
view works as before (reveal's notes window reloads this same file). Links to other decks and
web addresses are kept as written; only files inside the page's folder are inlined.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from slidegen.atomic import atomic_write

#: Types ``mimetypes`` may not know on every system.
TYPES = {
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".svg": "image/svg+xml",
    ".js": "text/javascript",
    ".css": "text/css",
    ".webp": "image/webp",
    ".json": "application/json",
}

_TAG_RE = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(\s[^<>]*?)?(/?)>", re.DOTALL)
_ATTR_RE = re.compile(r"""(\s)([A-Za-z_:][-A-Za-z0-9_:.]*)(\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")
_URL_RE = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)""")
_STYLE_BLOCK_RE = re.compile(r"(<style\b[^>]*>)(.*?)(</style\s*>)", re.DOTALL | re.IGNORECASE)
#: Attributes that load a file, on any element but a link or a frame.
_LOADS = frozenset({"src", "poster", "data-src", "data-background-image", "data-background-video"})


@dataclass
class Inlined:
    """One page made whole, and the files it named that could not be inlined (kept as written)."""

    html: str
    missing: list[str] = field(default_factory=list)


def media_type(path: Path) -> str:
    return TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def data_url(data: bytes, kind: str) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def local_file(url: str, base: Path, folder: Path) -> Path | None:
    """The file a relative ``url`` names from ``base`` when it exists inside ``folder``; ``None`` otherwise."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path or url.startswith(("/", "#")):
        return None
    try:
        path = (base / unquote(parts.path)).resolve()
    except (OSError, ValueError, RuntimeError):
        return None
    return path if path.is_file() and path.is_relative_to(folder) else None


class _Page:
    """Inlines the files of one page (its folder: what may be inlined)."""

    def __init__(self, page: Path) -> None:
        self.folder = page.parent.resolve()
        self.missing: list[str] = []

    def file(self, url: str, base: Path) -> Path | None:
        path = local_file(url, base, self.folder)
        if path is None and not urlsplit(url).scheme and not url.startswith(("#", "/", "data:")) and url:
            self.missing.append(url)
        return path

    def css(self, text: str, base: Path) -> str:
        """CSS with each ``url(...)`` naming a local file replaced by a ``data:`` URL."""

        def one(match: re.Match[str]) -> str:
            url = next((g for g in match.groups() if g is not None), "")
            if url.startswith("data:") or not url:
                return match.group(0)
            path = self.file(url, base)
            # unquoted: a data URL in base64 holds no quote or space, so it fits any attribute's quoting
            return f"url({data_url(path.read_bytes(), media_type(path))})" if path else match.group(0)

        return _URL_RE.sub(one, text)

    def attr(self, tag: str, attrs: str) -> str:
        """A tag's attributes with the files they load inlined."""
        rel = ""
        found = re.search(r"""\srel\s*=\s*["']?([^"'\s>]+)""", attrs, re.IGNORECASE)
        if found:
            rel = found.group(1).lower()

        def one(match: re.Match[str]) -> str:
            name = match.group(2).lower()
            group = next(i for i in (4, 5, 6) if match.group(i) is not None)
            value = match.group(group)
            url = value.replace("&amp;", "&")

            def put(new: str) -> str:  # the attribute with its value replaced, its quoting kept
                start, end = match.span(group)
                offset = match.start()
                return match.group(0)[: start - offset] + new + match.group(0)[end - offset :]

            if name == "style":
                return put(self.css(value, self.folder))
            loads = (name in _LOADS and tag not in ("iframe", "a")) or (
                name == "href" and tag == "link" and rel in ("stylesheet", "icon")
            )
            if not loads or url.startswith("data:") or not url:
                return match.group(0)
            path = self.file(url, self.folder)
            if path is None:
                return match.group(0)
            if tag == "link" and rel == "stylesheet":
                text = self.css(path.read_text(encoding="utf-8"), path.parent)
                inlined = data_url(text.encode("utf-8"), "text/css")
            else:
                inlined = data_url(path.read_bytes(), media_type(path))
            return put(inlined)

        return _ATTR_RE.sub(one, attrs)

    def html(self, text: str) -> str:
        def tag(match: re.Match[str]) -> str:
            name, attrs = match.group(1).lower(), match.group(2) or ""
            if not attrs:
                return match.group(0)
            return f"<{match.group(1)}{self.attr(name, attrs)}{match.group(3)}>"

        def style(match: re.Match[str]) -> str:
            return match.group(1) + self.css(match.group(2), self.folder) + match.group(3)

        return _STYLE_BLOCK_RE.sub(style, _TAG_RE.sub(tag, text))


def inline_page(page: Path) -> Inlined:
    """The page at ``page`` with every local file it loads inlined (see the module's docstring)."""
    inliner = _Page(Path(page))
    text = inliner.html(Path(page).read_text(encoding="utf-8"))
    return Inlined(text, list(dict.fromkeys(inliner.missing)))


def write_single(page: Path, warn: Callable[[str], None] | None = None) -> Path:
    """Replace the page at ``page`` by its self-contained form (atomically); ``warn`` hears each file missed."""
    whole = inline_page(page)
    for url in whole.missing:
        if warn is not None:
            warn(url)
    atomic_write(Path(page), whole.html.encode("utf-8"))
    return Path(page)
