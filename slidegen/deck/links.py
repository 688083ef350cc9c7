"""Where a link goes, read one way for every writer: the web, a slide of this deck, or a slide of another deck.

An author writes ``https://...`` (or ``mailto:``), ``#id`` (a slide of this deck, by its ``id:``) or
``NN-slug.md#id`` (a slide of another deck of the project). Each writer maps the same :class:`Target` to
its format: a reveal.js hash, a PowerPoint slide jump or file, a Markdown slide number from the deck index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A URL scheme (``https:``, ``mailto:``, ``javascript:``), as RFC 3986 spells one.
_SCHEME = re.compile(r"([a-z][a-z0-9+.-]*):", re.IGNORECASE)


@dataclass(frozen=True)
class Target:
    """A link's destination as written, taken apart."""

    url: str
    """As written."""
    scheme: str
    """``https``, ``mailto``... lower-cased; ``""`` for a link inside the project."""
    path: str
    """What comes before ``#`` (``02-data.md``; ``""`` for a slide of this deck)."""
    fragment: str
    """What comes after ``#``: the slide's ``id`` (``""``: none)."""

    @property
    def external(self) -> bool:
        """A link out of the project (it has a scheme)."""
        return bool(self.scheme)

    @property
    def this_deck(self) -> bool:
        """``#id``: a slide of the deck the link is on."""
        return self.url.startswith("#")

    @property
    def other_deck(self) -> bool:
        """``NN-slug.md`` or ``NN-slug.md#id``: another deck, or one of its slides."""
        return not self.scheme and self.path.endswith(".md")

    def with_suffix(self, suffix: str) -> str:
        """The other deck's file with its output's ``suffix`` (``02-data.md`` -> ``02-data.html``)."""
        return self.path[: -len(".md")] + suffix


def target(url: str) -> Target:
    """``url`` taken apart (nothing is checked here: a missing slide is the writer's warning)."""
    found = _SCHEME.match(url)
    path, _, fragment = url.partition("#")
    return Target(url, found.group(1).lower() if found else "", "" if found else path, fragment)
