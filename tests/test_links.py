"""Where a link goes (slidegen/deck/links.py), read one way for every writer and the check."""

from __future__ import annotations

import pytest

from slidegen.deck.links import target


@pytest.mark.parametrize(
    ("url", "external", "this_deck", "other_deck", "path", "fragment"),
    [
        ("https://example.org/a#b", True, False, False, "", "b"),
        ("MAILTO:me@example.org", True, False, False, "", ""),
        ("javascript:alert(1)", True, False, False, "", ""),
        ("#loss", False, True, False, "", "loss"),
        ("02-data.md#bpe", False, False, True, "02-data.md", "bpe"),
        ("02-data.md", False, False, True, "02-data.md", ""),
        ("img/a.png", False, False, False, "img/a.png", ""),
        ("", False, False, False, "", ""),
    ],
)
def test_a_link_is_taken_apart_once(
    url: str, external: bool, this_deck: bool, other_deck: bool, path: str, fragment: str
) -> None:
    to = target(url)
    assert (to.external, to.this_deck, to.other_deck, to.path, to.fragment) == (
        external,
        this_deck,
        other_deck,
        path,
        fragment,
    )


def test_another_decks_file_takes_each_outputs_suffix() -> None:
    assert target("02-data.md#bpe").with_suffix(".html") == "02-data.html"
    assert target("02-data.md").with_suffix(".pptx") == "02-data.pptx"
    assert target("HTTPS://x.org").scheme == "https"
