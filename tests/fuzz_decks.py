"""A seeded generator of odd and malformed decks and results files, for tests/test_fuzz.py.

Each case is ``(deck bytes, results.md bytes or None)``, drawn from one ``random.Random``:
pieces of every construct the parser knows (separators, YAML, fences, comments, references
and filters, layouts and slots, math, tables, clicks, images, links, files named by path as
pictures, snippets and imports, with paths no file system takes), Unicode edge cases and
control characters, huge and deeply nested input, then byte-level damage (invalid UTF-8,
CRLF, CR-only line endings, a BOM, truncation).
"""

from __future__ import annotations

import json
import random

LAYOUTS = [
    "cover",
    "default",
    "center",
    "section",
    "two-cols",
    "image-right",
    "image-left",
    "fact",
    "statement",
    "quote",
    "end",
    "nope",
    "",
    "two-cols-header",
]
KEYS = ["ch01.a", "ch01.b", "ch01.cited", "ch01.nope", "ch02.a", "x", "ch01.", ".a", "ch01.a.b.c"]
FILTERS = [
    "",
    " | pm",
    " | pct",
    " | sci",
    " | int",
    " | nope",
    " | pm | pct",
    ' | fmt(".3g")',
    ' | fmt(".999999999f")',
    ' | fmt(">2000000000")',
    ' | fmt("%")',
    ' | fmt("x")',
    " | fmt()",
    ' | fmt(".{n}f")',
    ' | fmt("{n}")',
    " | fmt('>,.2f')",
    ' | fmt("\\"")',
    " |",
    " | literal",
]
LANGS = [
    "",
    "py",
    "python {2-3|5}",
    "js {*}",
    "yaml",
    "mcschema",
    "postgresql",
    "prolog",
    "nixos",
    "gdscript",
    "solidity",
    "nosuchlang",
    "py {99}",
    "py {a-b}",
    "py {3-1}",
    "py {|}",
    "text",
    "html",
    "md",
]
#: Paths of files a deck names (a picture, an imported part, a snippet) that no file system takes or that cannot
#: be read: too long (one name, or the whole path), and tests/test_fuzz.py's ``parts/loop.*`` (symbolic links to
#: themselves) and ``parts/locked.*`` (mode 000) of each kind.
BAD_PATHS = [
    "a" * 4000 + ".png",
    "parts/" + "a/" * 2100 + "x.md",
    "n" * 300 + ".py",
    "../" * 1400 + "etc/passwd",
    *(f"parts/{name}.{ext}" for name in ("loop", "locked") for ext in ("png", "md", "py")),
    "parts/",
    "parts/loop.png/x.png",
    "a\x00b.md",
]
ODD = [
    "\u202e",
    "\u200b",
    "\u0301",
    "😀",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "\x00",
    "\x01",
    "\x0b",
    "\x1b",
    "\x7f",
    "\u2028",
    "\u00a0",
    "𝔘",
    "\t",
    "\\",
    "`",
    "*",
    "_",
    "~",
    "|",
    "<",
    ">",
    "&",
    '"',
    "'",
    "{",
    "}",
    "$",
    "#",
    "[",
    "]",
    "(",
    ")",
    "!",
    ":",
    "-",
    "=",
    "%",
    "\U0010ffff",
    "ﬁ",
    "İ",
    "ß",
]


def _word(r: random.Random) -> str:
    if r.random() < 0.06:
        return "".join(r.choice(ODD) for _ in range(r.randint(1, 4)))
    return r.choice(["loss", "Titel", "ñandú", "x", "a_b", "αβγ", "数字", "word", "42", "-1", "e"])


def _text(r: random.Random, n: int = 6) -> str:
    return " ".join(_word(r) for _ in range(r.randint(1, n)))


def _ref(r: random.Random) -> str:
    f = r.choice(FILTERS).replace("{n}", str(r.choice([0, 3, 50, 100, 101, 5000, 99999999])))
    return r.choice(
        [
            "{{ " + r.choice(KEYS) + f + " }}",
            "{{" + r.choice(KEYS) + "}}",
            '{{ "2,000" }}',
            "{{ }}",
            "{{ " + r.choice(KEYS),
            "{{{ ch01.a }}}",
            "{{ ch01.a }",
            "\\{{ ch01.a }}",
        ]
    )


def _yaml(r: random.Random) -> str:
    lines = []
    for _ in range(r.randint(0, 5)):
        key = r.choice(
            [
                "title",
                "layout",
                "image",
                "id",
                "class",
                "chapter",
                "summary",
                "author",
                "clicks",
                "background",
                "theme",
                "transition",
                "x",
                "src",
            ]
        )
        value = (
            r.choice(
                [
                    _text(r, 3),
                    r.choice(LAYOUTS),
                    '"' + _ref(r) + '"',
                    str(r.randint(-5, 10 ** r.randint(1, 30))),
                    "'" + "t" * r.randint(0, 400) + "'",
                    "pic.png",
                    "null",
                    "yes",
                    "2024-01-01",
                ]
            )
            if r.random() < 0.85
            else r.choice(
                [
                    "[a, b",
                    "{a: 1}",
                    "- x",
                    "&a [*a, *a]",
                    "!!python/object:os.system",
                    "|\n  block\n  text",
                    '"\\ud83d\\ude00"',
                    '"\\x01\\uFFFE"',
                    "~",
                    "../../etc/passwd",
                    "/etc/hostname",
                    "fig:ch01.nope",
                    "secret.png",
                    _text(r, 3),
                    "[" * r.choice([19, 25, 990]) + "]" * 990,
                    r.choice(BAD_PATHS),
                ]
            )
        )
        lines.append(f"{key}: {value}" if r.random() < 0.98 else f"{key}:{value}")
    if r.random() < 0.05:
        lines.append(
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]"
        )
    if r.random() < 0.03:
        lines.append(r.choice(["key: : :", "\tbad: tab", "[list]", "- a\n- b", "? complex", "%YAML 1.1"]))
    return "\n".join(lines)


def _block(r: random.Random, depth: int = 0) -> str:  # noqa: C901 (one branch per kind of block it writes)
    kind = r.randrange(20)
    if kind == 0:
        return "#" * r.randint(1, 7) + " " + _text(r)
    if kind == 1:
        marks = ["- ", "* ", "1. ", "  - ", "    - ", "+ "]
        return "\n".join(r.choice(marks) + _text(r) for _ in range(r.randint(1, 4)))
    if kind == 2:
        fence = r.choice(["```", "~~~", "````"])
        body = "\n".join(_text(r) for _ in range(r.randint(0, 4)))
        return f"{fence}{r.choice(LANGS)}\n{body}\n" + (fence if r.random() < 0.9 else "")
    if kind == 3:
        return r.choice(
            ["<!-- " + _text(r) + " -->", "<!-- unclosed", "<!-- a <!-- b --> -->", "-->", "<!-- " + _ref(r) + " -->"]
        )
    if kind == 4:
        return _text(r) + " " + _ref(r) + " " + _text(r)
    if kind == 5:
        return r.choice(["::right::", "::left::", "::default::", "::nope::", "::", ":: right ::", "- ::right::"])
    if kind == 6:
        return r.choice(
            [
                "$x^2$",
                "$\\alpha_t^2 + \\frac{a}{b}$",
                "$" + _ref(r) + "$",
                "$$\n\\sum_i x_i = " + _ref(r) + "\n$$",
                "$$\n\\begin{aligned} a &= b \\\\ c &= d \\end{aligned}\n$$",
                "$\\frac{$",
                "$$\n\\frac{\n$$",
                "$$",
                "$" + "{" * r.randint(1, 300) + "x" + "}" * r.randint(0, 300) + "$",
                "$$\n" + "\\sqrt{" * r.randint(1, 120) + "x" + "}" * r.randint(0, 120) + "\n$$",
                "$\\unknowncommand{x}$",
                "$$\n\\text{" + _text(r) + "}\n$$",
                "$ $",
                "$$ $$",
            ]
        )
    if kind == 7:
        cols = r.randint(1, 5)
        head = "| " + " | ".join(_text(r, 2) for _ in range(cols)) + " |"
        sep = "|" + "|".join(r.choice(["---", ":--", "--:", ":-:", "-"]) for _ in range(cols)) + "|"
        rows = [
            "| "
            + " | ".join(r.choice([_text(r, 2), _ref(r), "$x$", "`c|d`", "\\|"]) for _ in range(r.randint(0, cols + 2)))
            + " |"
            for _ in range(r.randint(0, 4))
        ]
        return "\n".join([head, sep, *rows])
    if kind == 8:
        inner = _block(r, depth + 1) if depth < 3 else _text(r)
        return r.choice(
            [
                f"<v-click>\n\n{inner}\n\n</v-click>",
                f"<v-clicks>\n\n{inner}\n\n</v-clicks>",
                f"<v-click>{_text(r)}</v-click>",
                "<v-click>",
                "</v-click>",
                '<v-click at="x">',
                f'<v-clicks depth="2">\n\n{inner}\n</v-clicks>',
            ]
        )
    if kind == 9:
        return _file_ref(
            r,
            r.choice(
                [
                    "pic.png",
                    "missing.png",
                    "fig:ch01.nope",
                    "/etc/hostname",
                    "../../../etc/passwd",
                    "http://example.com/x.png",
                    "secret.png",
                    "pic.svg",
                    "",
                    "a b.png",
                    'pic.png "t"',
                    "%00.png",
                    "pic.PNG",
                    "data:image/png;base64,AAAA",
                    *BAD_PATHS,
                ]
            ),
        )
    if kind == 10:
        return (
            "["
            + _text(r, 2)
            + "]("
            + r.choice(
                [
                    "01-x.md#id",
                    "#nope",
                    "02-y.md",
                    "javascript:alert(1)",
                    "http://e.com",
                    "",
                    "<>",
                    "01-x.md#" + _word(r),
                ]
            )
            + ")"
        )
    if kind == 11:
        return r.choice(
            [
                "<script>alert(1)</script>",
                "<img src=x onerror=alert(1)>",
                "<div>\n\n" + _text(r) + "\n\n</div>",
                "<style>body{}</style>",
                "</div>",
                "<br>",
                "<iframe src=x>",
            ]
        )
    if kind == 12:
        return "> " + _text(r) + "\n> > " + _text(r)
    if kind == 13:  # deep nesting
        n = r.choice([10, 60, 200, 1200])
        lists = "\n".join("  " * i + "- x" for i in range(min(n, 150)))
        return r.choice(
            [
                "*a " * n + "b" + " a*" * n,
                "> " * n + "x",
                lists,
                "[" * n + "x" + "](y)" * n,
                "**" * n + "x" + "**" * n,
                "<v-click>" * min(n, 200),
            ]
        )
    if kind == 14:  # huge
        return r.choice(["x" * 100_000, (_text(r) + " ") * 5000, "\n".join(["- " + _text(r)] * 2000)])
    if kind == 15:
        return r.choice(["---", "----", "--- ", "---\n---", "***", "___", "- - -"])
    if kind == 16:
        return "".join(r.choice(ODD) for _ in range(r.randint(1, 40)))
    if kind == 17:
        return "Term\n: definition " + _ref(r)
    if kind == 18:
        return _text(r) + "  \n" + _text(r) + "\\\n" + _text(r)
    return _text(r, 20)


def _file_ref(r: random.Random, path: str) -> str:
    """A file named by ``path``: as a picture, a raw ``<img>``, a ``<<<`` snippet or a ``src:`` import."""
    form = r.randrange(4)
    if form == 1:
        return f'<img src="{path}" alt="{_word(r)}">'
    if form == 2:
        return "<<< " + r.choice(["", "./", "@/", "@/decks/"]) + path + r.choice(["", "#region", " py {2}"])
    if form == 3:
        return "---\nsrc: " + r.choice(["", "./", "/"]) + path + r.choice(["", "#1", "#2-3"]) + "\n---"
    return "![" + _text(r, 2) + "](" + path + ")"


def deck(r: random.Random) -> str:
    """One deck's text, before byte-level damage."""
    parts = []
    if r.random() < 0.8:
        parts.append("---\n" + _yaml(r) + "\n---\n")
    for _ in range(r.choice([1, 1, 2, 3, 5, 8] if r.random() < 0.98 else [300])):
        blocks = [_block(r) if r.random() < 0.6 else _text(r, 12) for _ in range(r.randint(0, 5))]
        parts.append("\n\n".join(blocks))
        sep = r.choice(
            [
                "\n---\n",
                "\n----\n",
                "\n---\n" + _yaml(r) + "\n---\n",
                "\n---\n```yaml\n" + _yaml(r) + "\n```\n",
                "\n---\nlayout: " + r.choice(LAYOUTS) + "\n---\n",
            ]
        )
        parts.append(sep)
    if r.random() < 0.5:
        parts.pop()
    return "".join(parts)


ROW = "| {key} | {value} | {digits} | {sd} | {n} | {unit} | {what} | {source} |"
HEAD = "| key | value | digits | sd | n | unit | what | source |\n|---|---|---|---|---|---|---|---|"


def results(r: random.Random) -> str:
    """A results.md: usually valid with the keys the decks cite, sometimes broken in one of many ways."""
    rows = []
    for key in ["ch01.a", "ch01.b", "ch01.cited"]:
        cells = {
            "key": key,
            "value": r.choice(["2.30341", "0", "-1e-08", "3.14e+23", "5376", "1e308", "5e-324"]),
            "digits": r.choice(["3", "4", "1", "17"]),
            "sd": r.choice(["", "0.0121", "0"]),
            "n": r.choice(["", "3"]),
            "unit": r.choice(["nats", "", "%", "a\\|b"]),
            "what": r.choice(["loss", "a count", "Größe", "x \\| y"]),
            "source": "run ch01.default 9f3c2a1e" if r.random() < 0.1 else "cited: Someone 2024, §1",
        }
        if r.random() < 0.04:
            field = r.choice(list(cells))
            cells[field] = r.choice(
                [
                    "",
                    "x",
                    "9" * 5000,
                    "401",
                    "-1",
                    "1_000",
                    "nan",
                    "inf",
                    "cited:",
                    "0x10",
                    "ch02.a",
                    "run",
                    "|",
                    "\\",
                    _text(r, 2),
                    " 1",
                    "1e999",
                ]
            )
        rows.append(ROW.format(**cells))
    text = "# Results\n\n## ch01 — Chapter one\n\n" + HEAD + "\n" + "\n".join(rows) + "\n"
    damage = r.randrange(30)
    if damage == 0:
        text = text.replace("## ch01", "##ch01")
    elif damage == 1:
        text = rows[0] + "\n" + text
    elif damage == 2:
        text = text + "\n## ch01\n\n" + HEAD + "\n"
    elif damage == 3:
        text = text.replace("|---|---|---|---|---|---|---|---|\n", "")
    elif damage == 4:
        text = text + rows[0] + "\n"
    elif damage == 5:
        text = text.replace("| key |", "| kee |")
    elif damage == 6:
        text = text + "\n## ch02\n\nstray text\n"
    return text


def damage(r: random.Random, text: str) -> bytes:
    """``text`` as bytes, sometimes damaged: line endings, a BOM, invalid UTF-8, flips, truncation."""
    if r.random() < 0.1:
        text = text.replace("\n", "\r\n")
    elif r.random() < 0.05:
        text = text.replace("\n", "\r")
    if r.random() < 0.05:
        text = "\ufeff" + text
    data = text.encode("utf-8", "surrogatepass")
    if r.random() < 0.05 and data:
        data = bytearray(data)
        for _ in range(r.randint(1, 8)):
            at = r.randrange(len(data))
            op = r.randrange(3)
            if op == 0:
                data[at] = r.randrange(256)
            elif op == 1:
                data[at:at] = bytes([r.randrange(256)])
            else:
                del data[at]
            if not data:
                break
        data = bytes(data)
    if r.random() < 0.03:
        data = data[: r.randrange(len(data) + 1)]
    if r.random() < 0.02:
        data = r.choice([b"\xff\xfe" + text.encode("utf-16-le"), b"\x80\x81", b""])
    return data


def case(seed: int) -> tuple[bytes, bytes | None, bytes]:
    """Case ``seed``: the deck's bytes, results.md's bytes (None: no results file), a second deck's bytes."""
    r = random.Random(seed)
    main_deck = damage(r, deck(r))
    res = None if r.random() < 0.1 else damage(r, results(r)) if r.random() < 0.3 else results(r).encode()
    other = b"---\ntitle: Other\n---\n\n# Other {#id}\n\ntext\n"
    roll = r.random()
    if roll < 0.3:
        other = damage(r, deck(r))
    elif roll < 0.5:  # a deck whose one error, if any, is the path it names: so it is reached
        other += ("\n" + _file_ref(r, r.choice(BAD_PATHS)) + "\n").encode()
    return main_deck, res, other


GOOD_LAYOUTS = [
    "cover",
    "default",
    "center",
    "section",
    "two-cols",
    "image-right",
    "image-left",
    "fact",
    "statement",
    "quote",
    "end",
]
GOOD_FILTERS = [
    "",
    " | pm",
    " | pct",
    " | sci",
    " | int",
    ' | fmt(".3g")',
    ' | fmt(">{n},.{m}f")',
    ' | fmt("{n}")',
    ' | fmt("e")',
]
GOOD_LANGS = [
    "",
    "py",
    "python {2-3|5}",
    "js {*}",
    "yaml",
    "mcschema",
    "postgresql",
    "prolog",
    "nixos",
    "gdscript",
    "solidity",
    "nosuchlang",
    "text",
    "html",
    "md",
    "json",
    "bash",
    "c",
    "rust",
    "toml",
    "ini",
    "diff",
    "sql",
    "lean",
    "haskell",
    "latex",
    "xml",
    "css",
]


def _good_ref(r: random.Random) -> str:
    f = r.choice(GOOD_FILTERS).replace("{n}", str(r.randint(0, 100))).replace("{m}", str(r.randint(0, 100)))
    key = r.choice(["ch01.a", "ch01.b", "ch01.cited"])
    return "{{ " + key + (f if "pm" not in f or key != "ch01.cited" else "") + " }}"


def _good_block(r: random.Random, depth: int = 0) -> str:
    kind = r.randrange(14)
    text = _text(r, 8) + " " + (_good_ref(r) if r.random() < 0.4 else "")
    if kind == 0:
        return "#" * r.randint(1, 6) + " " + _text(r)
    if kind == 1:
        return "\n".join(
            r.choice(["- ", "1. "]) + _text(r) + (" " + _good_ref(r) if r.random() < 0.3 else "")
            for _ in range(r.randint(1, 5))
        )
    if kind == 2:
        body = "\n".join(_text(r, 10) for _ in range(r.randint(5, 12)))
        return f"```{r.choice(GOOD_LANGS)}\n{body}\n```"
    if kind == 3:
        return r.choice(
            [
                "$x^2$ and " + text,
                "$\\alpha_t^2 + \\frac{a}{b} = " + _good_ref(r) + "$",
                "$$\n\\sum_i x_i = " + _good_ref(r) + "\n$$",
                "$$\n" + "\\sqrt{" * 30 + "x" + "}" * 30 + "\n$$",
                "$$\n\\begin{aligned} a &= b \\\\ c &= d \\end{aligned}\n$$",
                "$" + "\\sqrt{" * r.randint(1, 80) + "x" + "}" * 80 + "$",
                "$\\text{" + _word(r) + "}$",
            ]
        )
    if kind == 4:
        cols = r.randint(1, 6)
        rows = [
            "| " + " | ".join(r.choice([_text(r, 2), _good_ref(r), "$x$", "**b**"]) for _ in range(cols)) + " |"
            for _ in range(r.randint(0, 6))
        ]
        return "\n".join(["| " + " | ".join(_text(r, 2) for _ in range(cols)) + " |", "|" + "---|" * cols, *rows])
    if kind == 5:
        inner = _good_block(r, depth + 1) if depth < 3 else text
        return r.choice([f"<v-click>\n\n{inner}\n\n</v-click>", f"<v-clicks>\n\n{inner}\n\n</v-clicks>"])
    if kind == 6:
        return "![" + _text(r, 2) + "](pic.png" + r.choice(["", ' "caption ' + _text(r, 2) + '"']) + ")"
    if kind == 7:
        return "[" + _text(r, 2) + "](" + r.choice(["02-y.md#id", "02-y.md", "https://example.com/a?b=c&d"]) + ")"
    if kind == 8:
        return "> " + text
    if kind == 9:
        n = r.choice([5, 20, 49])
        return r.choice(["*a " * n + "b" + " a*" * n, "\n".join("  " * i + "- x" for i in range(n))])
    if kind == 10:
        return r.choice([(text + " ") * r.randint(20, 400), "\n\n".join([text] * r.randint(5, 40))])
    if kind == 11:
        return "<!-- " + _text(r) + " " + (_good_ref(r) if r.random() < 0.5 else "") + " -->"
    return text


def mild_deck(r: random.Random) -> str:
    """A deck of valid constructs only (odd text, any lexer, deep but allowed nesting): it should build."""
    title, author = json.dumps(_text(r, 4), ensure_ascii=False), json.dumps(_word(r), ensure_ascii=False)
    parts = [f"---\ntitle: {title}\nauthor: {author}\n---\n\n"]
    for i in range(r.choice([1, 2, 4, 8, 20])):
        layout = r.choice(GOOD_LAYOUTS)
        if i:
            parts.append(f"\n\n---\nlayout: {layout}\n" + ("image: pic.png\n" if "image" in layout else "") + "---\n\n")
        blocks = [_good_block(r) for _ in range(r.randint(0, 5))]
        if layout == "two-cols" and i:
            blocks.insert(r.randint(0, len(blocks)), "::right::")
        parts.append("\n\n".join(blocks))
    return "".join(parts) + "\n"


def good_results() -> bytes:
    rows = [
        ROW.format(
            key="ch01.a",
            value="2.30341",
            digits="4",
            sd="0.0121",
            n="3",
            unit="nats",
            what="loss",
            source="cited: Someone 2024, §1",
        ),
        ROW.format(
            key="ch01.b",
            value="5376",
            digits="3",
            sd="12.5",
            n="3",
            unit="",
            what="count",
            source="cited: Someone 2024, §2",
        ),
        ROW.format(
            key="ch01.cited",
            value="6.02e+23",
            digits="3",
            sd="",
            n="",
            unit="",
            what="big",
            source="cited: Avogadro 1811",
        ),
    ]
    return ("# Results\n\n## ch01 — One\n\n" + HEAD + "\n" + "\n".join(rows) + "\n").encode()


def mild_case(seed: int) -> tuple[bytes, bytes | None, bytes]:
    """A case that should build cleanly: valid constructs with odd text."""
    r = random.Random(seed)
    other = b"---\ntitle: Other\n---\n\n# Other\n\n---\nid: id\n---\n\n# Second\n"
    return mild_deck(r).encode("utf-8", "surrogatepass"), good_results(), other
