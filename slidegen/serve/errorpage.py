"""The page that stands in for a deck that does not build: ``templates/error.html.j2`` in the theme's colours."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup

from slidegen import theme
from slidegen.errors import Diagnostic, display_path

#: The rule beside the heading: the one colour of the page that is not the theme's (it marks an error).
ERROR_RULE = "#b42318"


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("slidegen", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("error.html.j2")


def error_page(deck: Path, diagnostics: Iterable[Diagnostic | str]) -> str:
    """A page standing in for ``deck``: every problem, HTML-escaped, on the theme's background."""
    colors = {
        "background": theme.BACKGROUND,
        "text": theme.TEXT,
        "muted": theme.MUTED,
        "accent": theme.ACCENT,
        "code_background": theme.CODE_BACKGROUND,
        "rule": ERROR_RULE,
    }
    # inside <style> an entity is not decoded: the font lists (with their quotes) go in unescaped
    fonts = {"sans": Markup(theme.SANS_CSS), "mono": Markup(theme.MONO_CSS)}
    return _template().render(
        name=display_path(deck), problems=[str(d) for d in diagnostics], colors=colors, fonts=fonts
    )
