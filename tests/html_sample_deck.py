"""A deck built by hand from deck.py nodes, using every feature the HTML writer renders.

Shared by tests/test_html.py and tests/test_browser.py (not a test module itself).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from slidegen.deck import clicks
from slidegen.deck.nodes import (
    BulletList,
    Click,
    Code,
    CodeBlock,
    Deck,
    Emph,
    Figure,
    Heading,
    Image,
    LineBreak,
    Link,
    ListItem,
    Math,
    MathBlock,
    OrderedList,
    Paragraph,
    Quote,
    Ref,
    Rule,
    Slide,
    SoftBreak,
    Strike,
    Strong,
    Table,
    Text,
)

EVIL = "<script>alert(1)</script>"


def png(path: Path, width: int = 480, height: int = 300) -> Path:
    """Write a small striped PNG (no imaging library needed)."""
    rows = []
    for y in range(height):
        row = bytearray([0])  # filter: none
        for x in range(width):
            band = (x // 40 + y // 40) % 2
            row += bytes((0, 114, 178) if band else (230, 159, 0))
        rows.append(bytes(row))
    raw = zlib.compress(b"".join(rows))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b""))
    return path


def t(text: str) -> Text:
    return Text(text)


def p(*inlines) -> Paragraph:
    return Paragraph(tuple(i if not isinstance(i, str) else Text(i) for i in inlines))


def h(level: int, text: str) -> Heading:
    return Heading(level, (Text(text),))


def items(*texts: str) -> tuple[ListItem, ...]:
    return tuple(ListItem((p(x),)) for x in texts)


def slide(index: int, layout: str, blocks, **kw) -> Slide:
    title = kw.pop("title", "")
    if not title and blocks and isinstance(blocks[0], Heading):
        title = "".join(c.text for c in blocks[0].children if isinstance(c, Text))
        kw.setdefault("title_heading", 0)
    built = Slide(
        index=index,
        line=index * 10,
        layout=layout,
        frontmatter=kw.pop("frontmatter", {}),
        title=title,
        content="",
        blocks=tuple(blocks),
        **kw,
    )
    return clicks.resolve(built)  # as the reader does: writers take a slide's click timings as given


CODE = """\
def train(model, data, steps):
    opt = AdamW(model.parameters(), lr=3e-3)
    for step in range(steps):
        x, y = data.batch()
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())  # <script>
    return model
"""

BOUND = Ref(
    "ch01.val_loss.final",
    ("pm",),
    3,
    5,
    "2.30 ± 0.01",
    (
        ("label", "2.30 ± 0.01 nats (3 seeds) · run ch01.default <x>"),
        ("key", "ch01.val_loss.final"),
        ("value", "2.3034"),
        ("sd", "0.0121"),
        ("n", "3"),
        ("unit", "nats"),
        ("source", 'run ch01.default <9f3c2a1e> "x"'),
    ),
)


def kitchen_sink_deck(tmp: Path) -> tuple[Deck, dict[str, Path]]:
    """(deck, media) — one slide per layout plus content slides; media files written under ``tmp``."""
    figure_png = png(tmp / "loss curve.png")
    side_png = png(tmp / "side.png", 300, 400)
    slides = [
        slide(
            1,
            "cover",
            [h(1, "Training a tiny decoder"), p("From random weights to Hamlet in 2,000 steps")],
            notes="Welcome.",
            notes_blocks=(p("Welcome. Say ", Strong((t(EVIL),)), "."),),
        ),
        slide(
            2,
            "default",
            [
                h(1, "What we measure"),
                BulletList(
                    items(
                        "Validation loss, every 100 steps",
                        "Three seeds per setting",
                        "Numbers come from results.md",
                        "Nothing typed by hand",
                    )
                ),
                Click((p("Loss falls to ", BOUND, " nats."),)),
                Click((BulletList(items("one", "two", "three")),), each=True),
            ],
            id="measure",
            clicks=4,
            notes="n",
            notes_blocks=(p("Mention ", Ref("ch01.unknown"), " and ", Math("x^2")),),
        ),
        slide(
            3,
            "default",
            [
                h(1, "The training loop"),
                CodeBlock(CODE, "python", ((2,), (3, 4, 5), (), (7, 8)), line=40),
            ],
            clicks=3,
        ),
        slide(
            4,
            "default",
            [
                h(1, "Results"),
                Table(
                    header=((t("setting"),), (t("loss"),), (t("sd"),)),
                    rows=tuple(
                        ((t(f"lr {lr}"),), (t(f"{loss:.3f}"),), (t("0.01"),))
                        for lr, loss in [
                            ("1e-3", 2.41),
                            ("2e-3", 2.28),
                            ("3e-3", 2.21),
                            ("1e-2", 2.10),
                            ("3e-2", 2.06),
                            (EVIL, 9.99),
                        ]
                    ),
                    aligns=("left", "right", "center"),
                ),
            ],
        ),
        slide(
            5, "default", [h(1, "Loss curve"), Figure("Validation <loss>", "fig:ch01.loss", "Validation loss, 3 seeds")]
        ),
        slide(
            6,
            "default",
            [
                h(1, "Cross-entropy"),
                p("The loss of a uniform guess is ", Math(r"\ln 64 \approx 4.16"), "."),
                MathBlock(r"\mathcal{L} = -\frac{1}{T}\sum_{t=1}^{T} \log p_\theta(x_t \mid x_{<t})"),
                p("Broken TeX stays visible: ", Math(r"\frac{1}{")),
            ],
        ),
        slide(
            7,
            "two-cols",
            [
                h(1, "Pre-norm vs post-norm"),
                BulletList(items("LayerNorm before each sublayer", "Stable at high rates")),
            ],
            slots={"right": (BulletList(items("LayerNorm after the residual", "Needs warm-up")),)},
        ),
        slide(
            8,
            "image-right",
            [h(1, "A picture"), p("The image fills the right half.")],
            frontmatter={"layout": "image-right", "image": "img/side.png"},
        ),
        slide(
            9,
            "image-left",
            [h(1, "Missing image"), p("Its placeholder shows.")],
            frontmatter={"layout": "image-left", "image": "img/nowhere.png"},
        ),
        slide(10, "section", [h(1, "Part two: optimisers")]),
        slide(11, "fact", [h(1, "5,376"), p("parameters in the whole model")]),
        slide(12, "statement", [h(1, "Every number on a slide comes from a run.")]),
        slide(13, "quote", [Quote((p("The loss is not the goal; it is the evidence."),)), p("— a reviewer")]),
        slide(
            14,
            "center",
            [
                h(2, "Links"),
                p(
                    Link((t("next deck"),), "02-optim.md#warmup"),
                    SoftBreak(),
                    Link((t("this deck"),), "#measure"),
                    LineBreak(),
                    Link((t("docs"),), "https://example.org/a?b=1&c=2"),
                    " ",
                    Link((t("bad"),), "javascript:alert(1)"),
                    " ",
                    Emph((t("em"),)),
                    " ",
                    Strike((t("gone"),)),
                    " ",
                    Code(EVIL),
                    " ",
                    Image(EVIL, "nowhere.png"),
                ),
            ],
        ),
        slide(
            15,
            "default",
            [h(1, "Order of things"), OrderedList(items("first", "second"), start=3), Rule(), p("after the rule")],
        ),
        slide(16, "end", [h(1, "Questions?")]),
    ]
    deck = Deck(
        path=tmp / "01-training-loop.md",
        title="The training loop",
        headmatter={
            "title": "The training loop",
            "chapter": 1,
            "author": "A. Lecturer",
            "summary": "From random weights to Hamlet",
        },
        slides=tuple(slides),
    )
    media = {"fig:ch01.loss": figure_png, "img/side.png": side_png}
    return deck, media
