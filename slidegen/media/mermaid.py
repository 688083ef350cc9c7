"""Mermaid diagrams: where the library is, and the one configuration the page and the pictures share.

The HTML page renders each ```` ```mermaid ```` fence with ``mermaid.min.js`` (npm, pinned in
``package.json``, copied into ``assets/``); PowerPoint gets a picture of the same rendering
(:mod:`slidegen.write.snapshot`). Both initialise Mermaid with :func:`config`: the ``base`` theme with
the slide theme's colours and fonts, strict security (no scripts or links from diagram text).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from slidegen import theme
from slidegen.media.assets import AssetsMissing, find_node_modules

SCRIPT = "mermaid.min.js"


def script_path() -> Path:
    """``node_modules/mermaid/dist/mermaid.min.js``; :class:`AssetsMissing` says how to install it."""
    path = find_node_modules() / "mermaid" / "dist" / SCRIPT
    if not path.is_file():
        raise AssetsMissing("Mermaid not found: run `npm ci` (or `make setup`) to install the packages of package.json")
    return path


def version() -> str:
    """The installed Mermaid's version (part of every diagram picture's cache key): its ``package.json``'s,
    which a wheel carries beside the script; else a digest of the script itself (a copy without it)."""
    script = script_path()
    try:
        meta = json.loads((script.parent.parent / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = None
    if isinstance(meta, dict) and meta.get("version"):
        return str(meta["version"])
    return "sha256:" + hashlib.sha256(script.read_bytes()).hexdigest()[:16]


def config() -> dict[str, object]:
    """``mermaid.initialize`` settings: no start on load, strict security, the theme's colours and fonts."""
    return {
        "startOnLoad": False,
        "securityLevel": "strict",
        "theme": "base",
        "fontFamily": theme.SANS_CSS,
        "themeVariables": {
            "background": theme.BACKGROUND,
            "primaryColor": theme.CODE_BACKGROUND,
            "primaryTextColor": theme.TEXT,
            "primaryBorderColor": theme.ACCENT,
            "secondaryColor": theme.TABLE_HEADER_BACKGROUND,
            "tertiaryColor": theme.BACKGROUND,
            "lineColor": theme.MUTED,
            "textColor": theme.TEXT,
            "noteBkgColor": theme.CODE_HIGHLIGHT,
            "noteTextColor": theme.TEXT,
            "actorBkg": theme.CODE_BACKGROUND,
            "actorBorder": theme.ACCENT,
            "actorTextColor": theme.TEXT,
            "signalColor": theme.TEXT,
            "signalTextColor": theme.TEXT,
            "fontFamily": theme.SANS_CSS,
            "fontSize": "20px",
        },
    }


def config_json() -> str:
    """:func:`config` as JSON, for a ``<script>``."""
    return json.dumps(config(), sort_keys=True)


_ACC_RE = re.compile(r"^\s*(accDescr|accTitle)\s*:\s*(.+?)\s*$", re.MULTILINE)


def alt_text(code: str) -> str:
    """A diagram's alt text: its ``accDescr`` (or ``accTitle``), Mermaid's own accessibility lines, else its
    kind (``Diagram: flowchart LR``)."""
    found = dict((m.group(1), m.group(2)) for m in _ACC_RE.finditer(code))
    if found:
        return found.get("accDescr") or found["accTitle"]
    first = next((line.strip() for line in code.splitlines() if line.strip() and not line.strip().startswith("%%")), "")
    return f"Diagram: {first}"


_LINE_RE = re.compile(r"\bline (\d+)\b", re.IGNORECASE)


def error_line(message: str, fence_line: int) -> int:
    """The file line of a Mermaid parse error (``Parse error on line 2``) in a fence opened at ``fence_line``."""
    found = _LINE_RE.search(message)
    return fence_line + int(found.group(1)) if found else fence_line


def first_line(message: str) -> str:
    """A Mermaid error message reduced to one readable line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    head = lines[0] if lines else "unknown error"
    expecting = next((line for line in lines if line.startswith("Expecting")), "")
    head = head.rstrip(":")
    return f"{head}: {expecting}" if expecting and expecting != head else head
