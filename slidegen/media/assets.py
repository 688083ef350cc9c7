"""The files an HTML page (or an exported Markdown deck) loads beside it: vendor assets, our CSS, media.

Everything sits next to the page, so the output opens from ``file://`` with no network at
all: :func:`copy_assets` fills ``assets/`` with reveal.js and KaTeX (from ``node_modules``),
the theme's CSS and Pygments' colours, and Mermaid and the project's components when pages
use them; :func:`copy_media` copies a deck's pictures to ``media/STEM-HASH.EXT``, the names
the HTML and Markdown writers both link to. A file is written only when it is missing or its
content differs, so rebuilding is cheap.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

import jinja2
from pygments.formatters import HtmlFormatter

from slidegen import theme
from slidegen.atomic import atomic_write
from slidegen.errors import SlidegenError, UsageError

ASSETS_DIR = "assets"
MEDIA_DIR = "media"
#: Where the project's components are copied, inside ``assets/``.
COMPONENTS_ASSETS = "components"

#: Files copied from node_modules: (package-relative source, name in assets/).
_VENDOR_FILES = (
    ("reveal.js/dist/reveal.js", "reveal.js"),
    ("reveal.js/dist/reveal.css", "reveal.css"),
    ("reveal.js/dist/reset.css", "reset.css"),
    ("reveal.js/dist/plugin/notes.js", "notes.js"),
    ("katex/dist/katex.min.js", "katex.min.js"),
)

#: Everything the pages may load from node_modules (package-relative globs): what a wheel or sdist carries
#: in ``slidegen/_vendor/node_modules`` (setup.py reads this literal and ``_VENDOR_FILES`` without importing
#: this module; a file missing from node_modules at build time is left out when it is optional here).
BUNDLED = (
    "reveal.js/dist/reveal.js",
    "reveal.js/dist/reveal.css",
    "reveal.js/dist/reset.css",
    "reveal.js/dist/plugin/notes.js",
    "katex/dist/katex.min.js",
    "katex/dist/katex.min.css",
    "katex/dist/fonts/*.woff2",
    "mermaid/dist/mermaid.min.js",
    # each package's version (Mermaid's is part of every diagram picture's cache key) and licence notice
    "reveal.js/package.json",
    "reveal.js/LICENSE",
    "katex/package.json",
    "katex/LICENSE",
    "mermaid/package.json",
    "mermaid/LICENSE",
)
#: Which of :data:`BUNDLED` a wheel may go without (diagrams are drawn only by decks that have them).
OPTIONAL = ("mermaid/dist/mermaid.min.js", "mermaid/package.json", "mermaid/LICENSE")
#: Where an installed slidegen keeps the files of :data:`BUNDLED`, laid out as node_modules is.
BUNDLED_DIR = Path(__file__).resolve().parents[1] / "_vendor" / "node_modules"

_NODE_MODULES_HINT = (
    "reveal.js not found: run `npm ci` (or `make setup`) in the project, "
    "or install slidegen from a wheel, which carries it"
)


class AssetsMissing(UsageError):
    """node_modules (reveal.js, KaTeX) is missing: a set-up problem, not a content one (exit 2)."""

    def __init__(self, message: str = _NODE_MODULES_HINT) -> None:
        super().__init__(message)


# --------------------------------------------------------------------------- vendor assets and CSS


def find_node_modules(starts: Sequence[Path] | None = None) -> Path:
    """The ``node_modules`` holding reveal.js, searched upward from the cwd, then from this package; else the
    copy an installed wheel carries (:data:`BUNDLED_DIR`)."""
    bundled = [BUNDLED_DIR] if starts is None else []
    if starts is None:
        starts = [Path.cwd().resolve(), Path(__file__).resolve().parents[1]]
    candidates = [folder / "node_modules" for start in starts for folder in (start, *start.parents)]
    for candidate in [*candidates, *bundled]:
        if (candidate / "reveal.js" / "dist" / "reveal.js").is_file():
            return candidate
    raise AssetsMissing()


def copy_assets(out_dir: Path, components: Sequence[Path] = (), mermaid: bool = False) -> None:
    """Fill ``out_dir/assets`` with reveal.js, KaTeX (woff2 fonts only), our theme and Pygments CSS.

    ``components``: the component files (``components/NAME.js`` and ``.css``) the pages load, copied to
    ``assets/components/``; ``mermaid``: a page draws diagrams, so Mermaid is copied too.
    """
    modules = find_node_modules()
    katex_dist = modules / "katex" / "dist"
    if not (katex_dist / "katex.min.js").is_file():
        raise AssetsMissing("KaTeX not found: run `npm ci` (or `make setup`)")
    assets = Path(out_dir) / ASSETS_DIR
    for source, name in _VENDOR_FILES:
        sync(assets / name, (modules / source).read_bytes())
    katex_css = (katex_dist / "katex.min.css").read_text(encoding="utf-8")
    sync(assets / "katex.min.css", woff2_only(katex_css).encode())
    for font in sorted((katex_dist / "fonts").glob("*.woff2")):
        sync(assets / "fonts" / font.name, font.read_bytes())
    sync(assets / "theme.css", theme_css().encode())
    sync(assets / "pygments.css", pygments_css().encode())
    for path in components:
        sync(assets / COMPONENTS_ASSETS / Path(path).name, Path(path).read_bytes())
    if mermaid:
        script = modules / "mermaid" / "dist" / "mermaid.min.js"
        if not script.is_file():
            raise AssetsMissing("Mermaid not found: run `npm ci` (or `make setup`)")
        sync(assets / "mermaid.min.js", script.read_bytes())


def woff2_only(css: str) -> str:
    """KaTeX's CSS with every ``@font-face`` reduced to its woff2 source (the only fonts we ship)."""
    return re.sub(r',\s*url\([^)]*\.(?:woff|ttf)\)\s*format\("(?:woff|truetype)"\)', "", css)


def theme_css() -> str:
    """Our reveal.js theme, rendered from ``templates/theme.css.j2`` with :mod:`slidegen.theme`."""
    px_per_pt = theme.WIDTH_PX / (theme.WIDTH_IN * 72)
    sizes = {
        "title_px": round(theme.TITLE_PT * px_per_pt, 1),
        "body_px": round(theme.BODY_PT * px_per_pt, 1),
        "code_px": round(theme.CODE_PT * px_per_pt, 1),
        "table_px": round(theme.TABLE_PT * px_per_pt, 1),
        "main_px": round(theme.MIN_MAIN_PT * px_per_pt, 1),
        "small_px": round(theme.MIN_SMALL_PT * px_per_pt, 1) + 1,
    }
    values = {k: v for k, v in vars(theme).items() if k.isupper()}
    return templates().get_template("theme.css.j2").render(**values, **sizes)


def pygments_css() -> str:
    """Token colours of :data:`theme.CODE_STYLE`, scoped to ``.code`` (backgrounds come from the theme)."""
    rules = HtmlFormatter(style=theme.CODE_STYLE).get_token_style_defs(".code")
    return "\n".join(rules) + "\n"


@lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    """The package's templates: ``*.html.j2`` autoescaped; the CSS template sees only :mod:`theme` values."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("slidegen", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


# --------------------------------------------------------------------------- media


def copy_media(media: Mapping[str, Path], out_dir: Path) -> dict[str, str]:
    """Copy each media file to ``out_dir/media/STEM-HASH.EXT``; map its deck ``src`` to that relative URL."""
    urls: dict[str, str] = {}
    for src, path in media.items():
        data = Path(path).read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:12]
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(path).stem).strip(".-") or "media"
        name = f"{stem}-{digest}{Path(path).suffix.lower()}"
        sync(Path(out_dir) / MEDIA_DIR / name, data)
        urls[src] = f"{MEDIA_DIR}/{quote(name)}"
    return urls


def copy_runs(runs: Mapping[str, Path], out_dir: Path) -> list[str]:
    """Write each run record as ``out_dir/media/runs/ID-HASH.js``, a script that puts it in
    ``window.SLIDEGEN_RUNS`` (a page opened from disk may load scripts, not fetch JSON); their URLs."""
    urls: list[str] = []
    for run, path in sorted(runs.items()):
        record = Path(path).read_text(encoding="utf-8")
        try:
            json.loads(record)
        except ValueError as error:
            raise SlidegenError(
                path, 1, 1, f"run record is not JSON ({error}); `slidegen run {run} --force` records it again"
            ) from None
        data = (
            "window.SLIDEGEN_RUNS = window.SLIDEGEN_RUNS || {};\n"
            f"window.SLIDEGEN_RUNS[{json.dumps(run)}] = {record.strip()};\n"
        ).encode()
        name = f"{run}-{hashlib.sha256(data).hexdigest()[:12]}.js"
        sync(Path(out_dir) / MEDIA_DIR / "runs" / name, data)
        urls.append(f"{MEDIA_DIR}/runs/{quote(name)}")
    return urls


def sync(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` (atomically) unless it already holds exactly that."""
    if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return
    atomic_write(target, data)
