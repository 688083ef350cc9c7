"""A deck built by hand from deck.py dataclasses that uses every PPTX feature (no parser needed)."""

from __future__ import annotations

from pathlib import Path

from slidegen.deck import nodes as d

CODE = (
    "def step(model, batch, lr=3e-2):\n"
    '    """One training step."""\n'
    "    loss = model(batch).mean()  # forward\n"
    "    loss.backward()\n"
    "    return loss.item()\n"
)
EQUATION = r"\mathcal{L} = -\frac{1}{T}\sum_{t=1}^{T} \log p_\theta(x_t \mid x_{<t})"


def png(path: Path, size: tuple[int, int] = (320, 200)) -> Path:
    """A small PNG (a blue box on white) written with Pillow."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, "white")
    ImageDraw.Draw(img).rectangle((20, 20, size[0] - 20, size[1] - 20), outline="#0072b2", width=6)
    img.save(path)
    return path


def _t(text: str) -> d.Text:
    return d.Text(text)


def _p(*inlines: d.Inline, line: int = 0) -> d.Paragraph:
    return d.Paragraph(tuple(inlines), line)


def _li(*blocks: d.Block) -> d.ListItem:
    return d.ListItem(tuple(blocks))


def _slide(
    index: int, layout: str, title: str, blocks: tuple[d.Block, ...] = (), *, heading: bool = True, **fields
) -> d.Slide:
    """A slide whose title comes from a leading heading (like the parser makes it)."""
    if heading and title:
        blocks = (d.Heading(1, (_t(title),), index * 10 + 1), *blocks)
    return d.Slide(
        index=index,
        line=index * 10,
        layout=layout,
        frontmatter=fields.pop("frontmatter", {}),
        title=title,
        content="",
        blocks=blocks,
        title_heading=0 if heading and title else None,
        **fields,
    )


def every_feature_deck(tmp: Path) -> tuple[d.Deck, dict[str, Path]]:
    """A 13-slide deck with every layout, block and inline; and its media map."""
    media = {"fig:ch01.loss": png(tmp / "loss.png"), "img/wide.png": png(tmp / "wide.png", (800, 200))}
    bullets = d.BulletList(
        (
            _li(
                _p(
                    _t("Plain, "),
                    d.Emph((_t("emphasis"),)),
                    _t(", "),
                    d.Strong((_t("strong"),)),
                    _t(", "),
                    d.Strike((_t("struck"),)),
                    _t(" and "),
                    d.Code("inline_code()"),
                )
            ),
            _li(
                _p(
                    _t("Inline math "),
                    d.Math(r"\alpha_t^2"),
                    _t(" and a "),
                    d.Link((_t("web link"),), "https://example.org"),
                ),
                d.BulletList((_li(_p(_t("nested, with a "), d.Link((_t("jump to the code"),), "#code"))),)),
            ),
            _li(_p(_t("Another deck: "), d.Link((_t("chapter 2"),), "02-attention.md#heads"))),
        )
    )
    table = d.Table(
        ((_t("setting"),), (_t("loss"),)),
        (((_t("baseline"),), (_t("2.30"),)), ((_t("cosine"),), (d.Ref("ch01.cosine", text="2.06"),))),
        ("left", "right"),
        40,
    )
    slides = (
        _slide(1, "cover", "Training a tiny decoder", (_p(_t("From ln 64 to 2.3 nats")),)),
        _slide(
            2,
            "default",
            "What we measure",
            (
                _p(_t("Loss falls from "), d.Ref("ch01.init", text="4.17"), _t(" to "), d.Ref("ch01.final"), _t(".")),
                bullets,
                d.OrderedList((_li(_p(_t("first"))), _li(_p(_t("second"))), _li(_p(_t("third")))), start=1),
            ),
            notes="Say hello.",
            notes_blocks=(_p(_t("Say hello.")), d.BulletList((_li(_p(_t("point one"))),))),
        ),
        _slide(3, "default", "The training step", (d.CodeBlock(CODE, "python", ((2, 3), (5,)), 30),), id="code"),
        _slide(
            4,
            "two-cols",
            "Loss and table",
            (d.Figure("Loss curve falling", "fig:ch01.loss", "Validation loss", 42),),
            slots={"right": (table,)},
        ),
        _slide(5, "center", "Cross-entropy", (d.MathBlock(EQUATION, 52), _p(_t("T is the context length")))),
        _slide(6, "section", "Part II", (_p(_t("attention")),)),
        _slide(
            7,
            "image-right",
            "Side by side",
            (d.BulletList((_li(_p(_t("falls fast"))),)),),
            frontmatter={"image": "img/wide.png"},
        ),
        _slide(8, "image-left", "Missing image", (_p(_t("no picture here")),), frontmatter={"image": "nope.png"}),
        _slide(9, "fact", "5,376", (_p(_t("parameters")),)),
        _slide(10, "statement", "Measure, never type a number"),
        _slide(11, "quote", "", (d.Quote((_p(_t("Simple as possible, but not simpler.")),)),), heading=False),
        _slide(
            12,
            "default",
            "Clicks",
            (d.Click((_p(_t("revealed on click")),)), d.MathBlock(r"\hat{y} = \sqrt{x^2 + 1}", 122)),
        ),
        _slide(13, "end", "Thank you", (_p(_t("questions?")),)),
    )
    headmatter = {"title": "Training a tiny decoder", "author": "A. Author", "chapter": 1}
    return d.Deck(Path("decks/01-training.md"), "Training a tiny decoder", headmatter, slides), media
