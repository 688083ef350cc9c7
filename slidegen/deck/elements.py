"""Custom elements' attributes, and the media keys of the pictures PowerPoint shows in place of what it
cannot draw (a component, a Mermaid diagram, an HTML region).

Pure text functions the node types of :mod:`.nodes` compute their fields with; they import nothing.
A key names a picture for as long as what it shows is the same: a component by its tag and
attributes, a diagram by its text, an HTML region by its line and text.
"""

from __future__ import annotations

import hashlib
import html
import re

_ATTR_RE = re.compile(r"""([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_attrs(source: str) -> tuple[tuple[str, str], ...]:
    """``' peak="0.02" warmup=100 disabled'`` -> ``(("peak", "0.02"), ("warmup", "100"), ("disabled", ""))``."""
    out = []
    for m in _ATTR_RE.finditer(source):
        value = next((g for g in m.groups()[1:] if g is not None), "")
        out.append((m.group(1).lower(), html.unescape(value)))
    return tuple(out)


def component_key(tag: str, source: str) -> str:
    """The media key of a component's picture: its tag and a hash of its attributes (in any order)."""
    canon = "\0".join(f"{k}={v}" for k, v in sorted(parse_attrs(source)))
    return f"component:{tag}:{_digest(canon)}"


def diagram_key(code: str) -> str:
    """The media key of a Mermaid diagram's picture: a hash of its text."""
    return f"mermaid:{_digest(code)}"


def region_key(text: str, line: int) -> str:
    """The media key of an HTML region's picture: its line and a hash of its HTML."""
    return f"html:{line}:{_digest(text)}"
