"""The reveal.js writer, without a browser: exact facts about the HTML it writes."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import html_sample_deck as sample_deck
import pytest

from slidegen import theme
from slidegen.deck.nodes import CodeBlock, Deck, DeckEntry, Paragraph, Slide, Text
from slidegen.media import assets
from slidegen.write import html

kitchen_sink_deck, png = sample_deck.kitchen_sink_deck, sample_deck.png

SLUG = "01-training-loop"


class Tags(HTMLParser):
    """Every start tag of a page as (tag, attrs), plus each <section>'s raw HTML."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def sections(page: str) -> list[str]:
    return re.findall(r"<section\b.*?</section>", page, flags=re.S)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("html")
    deck, media = kitchen_sink_deck(src)
    assets.copy_assets(out)
    path = html.write_deck(deck, out, media)
    return deck, out, path.read_text(encoding="utf-8")


def test_writes_slug_html_and_one_section_per_slide(built):
    deck, out, page = built
    assert (out / f"{SLUG}.html").is_file()
    assert len(sections(page)) == len(deck.slides) == 16
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))


def test_deck_content_is_escaped_everywhere(built):
    _, _, page = built
    # our own four script tags, and not one from the deck
    assert page.count("<script") == 4
    assert "alert(1)</script>" not in page
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    body = sections(page)
    assert escaped in body[0]  # notes
    assert escaped in body[3]  # table cell
    assert "# &lt;script&gt;" in body[2]  # code comment
    assert f'aria-label="{escaped}"' in body[13]  # alt text of a missing inline image
    assert f"<code>{escaped}</code>" in body[13]  # inline code
    assert 'alt="Validation &lt;loss&gt;"' in body[4]  # figure alt


def test_slide_ids_layouts_and_dark_backgrounds(built):
    _, _, page = built
    tags = Tags(page)
    assert tags.find("section", id="measure")
    layouts = [a["class"].split()[0] for a in tags.find("section")]
    assert layouts[:3] == ["layout-cover", "layout-default", "layout-default"]
    for a in tags.find("section"):
        dark = a["class"].split()[0] in {"layout-section", "layout-fact", "layout-statement", "layout-end"}
        assert a["data-background-color"] == (theme.ACCENT_DARK_BG if dark else theme.BACKGROUND)
        assert ("tone-dark" in a["class"].split()) == dark


def test_sections_carry_the_classes_of_their_layouts_facts(built):
    _, _, page = built
    classes = {a["class"].split()[0]: a["class"] for a in Tags(page).find("section")}
    assert classes["layout-cover"] == "layout-cover centered"
    assert classes["layout-default"] == "layout-default"
    assert classes["layout-fact"] == "layout-fact tone-dark centered text-center"
    assert classes["layout-quote"] == "layout-quote centered"
    assert classes["layout-two-cols"] == "layout-two-cols"
    assert classes["layout-image-right"] == "layout-image-right image-side-right"
    assert classes["layout-image-left"] == "layout-image-left image-side-left"


def test_clicks_become_numbered_fragments(built):
    deck, _, page = built
    for slide, section in zip(deck.slides, sections(page), strict=True):
        indices = sorted({int(i) for i in re.findall(r'data-fragment-index="(\d+)"', section)})
        assert indices == list(range(slide.clicks)), slide.index
    measure = sections(page)[1]
    assert measure.count('<li class="fragment"') == 3  # v-clicks: one per item
    assert '<div class="fragment" data-fragment-index="0">' in measure  # v-click: one block


def test_code_is_highlighted_with_steps(built):
    _, _, page = built
    code = sections(page)[2]
    assert 'data-steps="2|3,4,5||7,8"' in code
    assert code.count('class="fragment custom code-step"') == 3
    assert code.count('<span class="line') == 11
    assert re.findall(r'class="line hl" data-line="(\d+)"', code) == ["2"]  # first step, before any click
    assert '<span class="k">def</span>' in code  # Pygments classes, coloured by pygments.css
    assert "hljs" not in page


def test_notes_are_rendered_html_without_fragments(built):
    _, _, page = built
    notes = re.findall(r'<aside class="notes">(.*?)</aside>', page, flags=re.S)
    assert len(notes) == 2
    assert "<strong>" in notes[0]
    assert "fragment" not in "".join(notes)


def test_links_are_rewritten_for_reveal(built):
    _, _, page = built
    hrefs = [a["href"] for a in Tags(sections(page)[13]).find("a")]
    assert hrefs == ["02-optim.html#/warmup", "#/measure", "https://example.org/a?b=1&c=2"]
    assert 'href="javascript:' not in page
    assert '<span class="link-removed" title="javascript:alert(1)">bad</span>' in page


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("#intro", "#/intro"),
        ("03-x.md#warmup", "03-x.html#/warmup"),
        ("03-x.md", "03-x.html"),
        ("glossary.md#adam", "glossary.html#/adam"),
        ("https://a.org/x#y", "https://a.org/x#y"),
        ("mailto:a@b.org", "mailto:a@b.org"),
        ("JavaScript:alert(1)", None),
        ("data:text/html,x", None),
    ],
)
def test_rewrite_url(url, expected):
    assert html.rewrite_url(url) == expected


def test_refs_carry_their_provenance(built):
    _, _, page = built
    tags = Tags(page)
    (bound,) = tags.find("span", **{"class": "ref"})
    assert bound["data-key"] == "ch01.val_loss.final"
    assert bound["data-value"] == "2.3034" and bound["data-sd"] == "0.0121" and bound["data-n"] == "3"
    assert bound["data-source"] == 'run ch01.default <9f3c2a1e> "x"'  # escaped in the file, intact when read
    assert bound["title"] == "2.30 ± 0.01 nats (3 seeds) · run ch01.default <x>"  # a sentence, for a person
    assert "data-label" not in page and page.count('data-key="ch01.val_loss.final"') == 1  # each attribute once
    assert ">2.30 ± 0.01</span>" in page
    assert '<span class="ref unbound" data-key="ch01.unknown">{{ ch01.unknown }}</span>' in page


def test_math_is_left_for_katex_as_escaped_tex(built):
    _, _, page = built
    assert '<span class="math inline">\\ln 64 \\approx 4.16</span>' in page
    assert '<div class="math display">\\mathcal{L} = -\\frac{1}{T}' in page
    assert "x_{&lt;t})</div>" in page


def test_table_has_head_and_aligns(built):
    _, _, page = built
    table = sections(page)[3]
    assert len(re.findall(r"<th[ >]", table)) == 3 and "<thead>" in table and "<tbody>" in table
    assert '<th class="align-right">loss</th>' in table
    assert '<td class="align-center">0.01</td>' in table


def test_media_are_copied_and_missing_ones_shown(built):
    _, out, page = built
    tags = Tags(page)
    srcs = [a["src"] for a in tags.find("img")]
    assert len(srcs) == 2 and all(s.startswith("media/") for s in srcs)
    assert all((out / s).is_file() for s in srcs)
    (figure_img,) = [a for a in tags.find("img") if a.get("alt")]
    assert figure_img["alt"] == "Validation <loss>"
    assert "<figcaption>Validation loss, 3 seeds</figcaption>" in page
    assert "image not found: img/nowhere.png" in sections(page)[8]
    assert page.count('class="missing-image"') == 2


def test_footer_names_deck_and_chapter(built):
    deck, _, page = built
    for n, section in enumerate(sections(page), start=1):
        assert '<span class="footer-deck">The training loop</span>' in section
        assert '<span class="footer-chapter">Chapter 1</span>' in section
        assert f'<span class="footer-number">{n} / {len(deck.slides)}</span>' in section


def test_cover_shows_author(built):
    _, _, page = built
    assert '<p class="cover-meta">A. Lecturer</p>' in sections(page)[0]


def test_reveal_config(built):
    _, _, page = built
    config = page.split("Reveal.initialize(")[1]
    for fact in ("width: 1280", "height: 720", "hash: true", 'slideNumber: "c/t"', "plugins: [RevealNotes]"):
        assert fact in config


def _asset_refs(page: str) -> list[str]:
    tags = Tags(page)
    refs = [a["src"] for t, a in tags.tags if t in ("script", "img") and "src" in a]
    refs += [a["href"] for a in tags.find("link")]
    return refs


def test_everything_loads_from_disk(built):
    _, out, page = built
    refs = _asset_refs(page)
    assert refs, "no assets referenced"
    for ref in refs:
        assert not re.match(r"(https?:)?//", ref), ref
        assert ref.startswith("data:") or (out / ref).is_file(), ref
    for css in (out / "assets").glob("*.css"):
        text = css.read_text(encoding="utf-8")
        assert "@import" not in text, css.name
        for url in re.findall(r"url\(([^)]*)\)", text):
            url = url.strip("'\"")
            assert url.startswith("data:") or (css.parent / url).is_file(), (css.name, url)


def test_assets_are_complete_and_woff2_only(built):
    _, out, _ = built
    assets = out / "assets"
    for name in (
        "reveal.js",
        "reveal.css",
        "reset.css",
        "notes.js",
        "katex.min.js",
        "katex.min.css",
        "theme.css",
        "pygments.css",
    ):
        assert (assets / name).is_file(), name
    fonts = list((assets / "fonts").iterdir())
    assert fonts and all(f.suffix == ".woff2" for f in fonts)
    assert 'format("woff")' not in (assets / "katex.min.css").read_text(encoding="utf-8")


def test_theme_css_follows_theme_py(built):
    _, out, _ = built
    css = (out / "assets" / "theme.css").read_text(encoding="utf-8")
    for value in (theme.TEXT, theme.ACCENT, theme.ACCENT_DARK_BG, theme.CODE_HIGHLIGHT, theme.SANS_CSS, theme.MONO_CSS):
        assert value in css
    assert "--title: 48.0px" in css and "--code: 24.0px" in css
    assert "http" not in css and "@font-face" not in css


def test_copy_assets_rewrites_nothing_when_unchanged(built):
    _, out, _ = built
    before = {p: p.stat().st_mtime_ns for p in (out / "assets").rglob("*") if p.is_file()}
    assets.copy_assets(out)
    after = {p: p.stat().st_mtime_ns for p in (out / "assets").rglob("*") if p.is_file()}
    assert before == after


def test_copy_assets_repairs_a_changed_file(tmp_path):
    assets.copy_assets(tmp_path)
    target = tmp_path / "assets" / "reveal.css"
    target.write_text("broken")
    assets.copy_assets(tmp_path)
    assert target.stat().st_size > 1000


def test_missing_node_modules_is_a_clear_error(tmp_path):
    with pytest.raises(assets.AssetsMissing, match=r"reveal.js not found: run `npm ci` \(or `make setup`\)"):
        assets.find_node_modules([tmp_path])


def test_media_names_are_content_hashes(tmp_path):
    a = png(tmp_path / "same.png")
    b = tmp_path / "copy.png"
    b.write_bytes(a.read_bytes())
    deck = Deck(tmp_path / "02-x.md", "X", {}, (Slide(1, 1, "default", {}, "", "", (Paragraph((Text("x"),)),)),))
    html.write_deck(deck, tmp_path / "out", {"same.png": a, "copy.png": b})
    names = sorted(p.name for p in (tmp_path / "out" / "media").iterdir())
    assert len(names) == 2 and names[0].split("-")[-1] == names[1].split("-")[-1]


def test_long_code_gets_the_smaller_size(tmp_path):
    code = "\n".join(f"x = {i}" for i in range(20))
    deck = Deck(tmp_path / "03-x.md", "X", {}, (Slide(1, 1, "default", {}, "", "", (CodeBlock(code, "nosuchlang"),)),))
    page = html.write_deck(deck, tmp_path, {}).read_text(encoding="utf-8")
    assert '<div class="code long" data-lang="nosuchlang">' in page
    assert "data-steps" not in "".join(sections(page))


def test_index_lists_every_deck(tmp_path, built):
    deck, _, _ = built
    entry = DeckEntry(deck.path, deck.title, deck.headmatter, ())
    glossary = DeckEntry(tmp_path / "glossary.md", "Glossary <&>", {"summary": "Terms"}, ())
    page = html.write_index([entry, glossary], tmp_path).read_text(encoding="utf-8")
    tags = Tags(page)
    assert [a["href"] for a in tags.find("a") if "deck-title" in a.get("class", "")] == [
        f"{SLUG}.html",
        "glossary.html",
    ]
    assert "Chapter 1" in page and "From random weights to Hamlet" in page
    assert "Glossary &lt;&amp;&gt;" in page
    assert "no decks yet" not in page
    assert "<h1>Slides</h1>" in page  # no series named


def test_index_names_the_series_counts_slides_and_links_every_output(tmp_path, built):
    """The series' title, each deck's slide count (from its page), a picture of its cover and the files built."""
    deck, _, _ = built
    out = tmp_path / "html"
    out.mkdir()
    html.write_deck(deck, out, {})
    (tmp_path / "pptx").mkdir()
    (tmp_path / "pptx" / f"{deck.slug}.pptx").write_bytes(b"PK")
    entry = DeckEntry(deck.path, deck.title, deck.headmatter, ())
    files = {deck.slug: {"pptx": tmp_path / "pptx" / f"{deck.slug}.pptx", "pdf": tmp_path / "pdf" / "none.pdf"}}
    page = html.write_index([entry], out, "A Series <of talks>", files).read_text(encoding="utf-8")
    tags = Tags(page)
    assert "<h1>A Series &lt;of talks&gt;</h1>" in page and "<title>A Series &lt;of talks&gt;</title>" in page
    assert f"{len(deck.slides)} slides" in page
    links = {name: href for href, name in re.findall(r'<a href="([^"]+)">(HTML|PPTX|PDF)</a>', page)}
    assert links == {"HTML": f"{SLUG}.html", "PPTX": f"../pptx/{SLUG}.pptx"}  # no PDF was built: no link
    (frame,) = tags.find("iframe")
    assert frame["src"] == f"{SLUG}.html?thumbnail#/0"


def test_index_without_decks_says_how_to_add_one(tmp_path):
    page = html.write_index([], tmp_path).read_text(encoding="utf-8")
    assert "There are no decks yet in <code>decks/</code>." in page
    assert "slidegen build" in page


def test_sample_deck_renders(tmp_path):
    """The parser's fixture deck, once it and the parser exist: every slide a section, clicks counted."""
    from slidegen.read import parse

    sample = Path(__file__).parent / "fixtures" / "decks" / "sample.md"
    deck = parse.parse_deck(sample)
    page = html.write_deck(deck, tmp_path, {}).read_text(encoding="utf-8")
    assert len(sections(page)) == len(deck.slides)
    for slide, section in zip(deck.slides, sections(page), strict=True):
        indices = {int(i) for i in re.findall(r'data-fragment-index="(\d+)"', section)}
        assert len(indices) == slide.clicks, f"slide {slide.index}"
    assert page.count("<script") == 4
