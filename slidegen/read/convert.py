"""markdown-it tokens -> deck blocks and inlines, with exact source positions.

A :class:`Converter` turns the token stream of one piece of a deck (a slide's body, or
its notes) into :mod:`slidegen.deck.nodes` nodes. It knows where that piece starts in the file,
so every block gets its source line, and every result reference (in running text, math,
alt text and captions), every text run and every link or image target its exact line and
column. Inline offsets come from :mod:`slidegen.read.mdplugins.positions`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from markdown_it.token import Token

from slidegen.deck import htmlkinds, rawhtml
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.read.mdplugins.directives import CLICK_TAG_RE
from slidegen.read.mdplugins.refs import RawRef, raw_refs, ref_spans
from slidegen.read.snippets import SnippetError, load_snippet

BR_RE = re.compile(r"<br\s*/?>", re.IGNORECASE)
COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
STEP_RE = re.compile(r"(\d+)(?:-(\d+))?")
MATH_STEPS_RE = re.compile(r"\s*\{([0-9a-z*,|\s-]*)\}[ \t]*(?:\n|$)")
MATH_LINE_RE = re.compile(r"\\\\")
#: The step ``none``: no line lit (line 0 does not exist), every line dimmed.
NO_LINES: tuple[int, ...] = (0,)
#: A CSS length a code block's ``maxHeight`` may be.
CSS_LENGTH_RE = re.compile(r"\d+(?:\.\d+)?(?:px|em|rem|%|vh|pt)")
OPTION_RE = re.compile(r"""\s*([A-Za-z]+)\s*:\s*('[^']*'|"[^"]*"|[^,]+?)\s*(?:,|$)""")
MALFORMED_REF = "malformed result reference '{}': write {{{{ chNN.key }}}} or {{{{ chNN.key | filter }}}}"
_SPANS: dict[str, type[d.Emph | d.Strong | d.Strike]] = {"em_open": d.Emph, "strong_open": d.Strong, "s_open": d.Strike}


#: How deep emphasis, links and strikethrough may nest in one paragraph (every walk of the tree recurses).
MAX_INLINE_NESTING = 50


class Converter:
    """Converts the tokens of text that starts at 0-based line ``line0`` of ``lines`` (the file)."""

    def __init__(self, path: Path, lines: list[str], line0: int) -> None:
        self.path, self.lines, self.line0 = path, lines, line0

    def error(self, line: int, col: int, message: str) -> SlidegenError:
        return SlidegenError(self.path, line, col, message)

    def line_of(self, token: Token) -> int:
        """The 1-based file line where a block token starts."""
        return self.line0 + (token.map[0] if token.map else 0) + 1

    # ------------------------------------------------------------------ blocks

    def blocks(self, tokens: list[Token]) -> tuple[d.Block, ...]:
        """Blocks of a token run that holds whole blocks (a slide, a list item, a quote...)."""
        out: list[d.Block] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.nesting == 1:
                close = _closing(tokens, i)
                block = self.container(token, tokens[i + 1 : close])
                i = close + 1
            else:
                block = self.leaf(token)
                i += 1
            if block is not None:
                out.append(block)
        return tuple(out)

    def container(self, token: Token, inner: list[Token]) -> d.Block | None:
        line = self.line_of(token)
        kind = token.type
        if kind == "paragraph_open":
            return self.paragraph(inner[0], line)
        if kind == "heading_open":
            return d.Heading(int(token.tag[1]), _rstrip(self.inlines(inner[0])), line)
        if kind in ("bullet_list_open", "ordered_list_open"):
            items = self.list_items(inner)
            if kind == "bullet_list_open":
                return d.BulletList(items, line)
            return d.OrderedList(items, int(token.attrGet("start") or 1), line)
        if kind == "blockquote_open":
            return d.Quote(self.blocks(inner), line)
        if kind == "table_open":
            return self.table(inner, line)
        if kind == "v_click_open":
            options = self.click_options(str(token.meta.get("name", "v-click")), str(token.meta.get("attrs", "")), line)
            return d.Click(self.blocks(inner), bool(token.meta["each"]), line, **options)
        return None

    def footnotes(self, tokens: list[Token]) -> tuple[d.Footnote, ...]:
        """The footnotes of a ``footnote_block`` (the tokens markdown-it puts after a slide's body)."""
        out: list[d.Footnote] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.type == "footnote_open":
                close = _closing(tokens, i)
                inner = [t for t in tokens[i + 1 : close] if t.type != "footnote_anchor"]
                blocks = self.blocks(inner)
                line = next((self.line_of(t) for t in inner if t.map), 0)
                number = int(token.meta["id"]) + 1
                out.append(d.Footnote(number, str(token.meta.get("label") or number), blocks, line))
                i = close
            i += 1
        return tuple(sorted(out, key=lambda note: note.number))

    def list_items(self, tokens: list[Token]) -> tuple[d.ListItem, ...]:
        """The items of a list, from the tokens between its open and close."""
        items: list[d.ListItem] = []
        i = 0
        while i < len(tokens):
            close = _closing(tokens, i) if tokens[i].nesting == 1 else i
            if tokens[i].type == "list_item_open":
                items.append(d.ListItem(self.blocks(tokens[i + 1 : close]), self.line_of(tokens[i])))
            i = close + 1
        return tuple(items)

    def leaf(self, token: Token) -> d.Block | None:
        line = self.line_of(token)
        kind = token.type
        if kind == "fence":
            code = _strip_newline(token.content)
            lang, steps, options = self.fence_options(token.info, code, line)
            return htmlkinds.code_block(d.CodeBlock(code, lang, steps, line, **_code_fields(options)))
        if kind == "snippet":
            return self.snippet(token, line)
        if kind == "code_block":
            return d.CodeBlock(_strip_newline(token.content), "", (), line)
        if kind in ("math_block", "math_block_label"):
            return self.math_block(token, line)
        if kind == "hr":
            return d.Rule(line)
        if kind == "html_block":
            return self.html_block(token, line)
        if kind == "slot":
            source = self.lines[line - 1]
            raise self.error(
                line,
                source.find("::") + 1,
                f"slot '{token.content}' must stand alone "
                "at the top level of the slide, not inside a list, quote or <v-click>",
            )
        return None

    def paragraph(self, inline: Token, line: int) -> d.Block:
        """A paragraph, a Figure (an image alone), or a Click wrapping one (inline ``<v-click>``)."""
        children = list(inline.children or [])
        wrapped = _click_wrapper(children)
        if wrapped is not None:
            name, attrs, inner = wrapped
            body = self._paragraph_or_figure(_rstrip(self.inlines(inline, inner)), line)
            return d.Click((body,), name == "v-clicks", line, **self.click_options(name, attrs, line))
        return self._paragraph_or_figure(_rstrip(self.inlines(inline, children)), line)

    def click_options(self, name: str, attrs: str, line: int) -> dict[str, Any]:
        """The ``at``/``hide``/``depth``/``every`` of a click tag written on ``line``; a bad one is an error there."""
        source = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        col = max(source.find("<v-"), 0) + 1
        try:
            return click_options(name, attrs)
        except ValueError as exc:
            raise self.error(line, col, f"<{name}>: {exc}") from None

    @staticmethod
    def _paragraph_or_figure(nodes: tuple[d.Inline, ...], line: int) -> d.Block:
        """A Figure when an image is all the paragraph shows, else a Paragraph."""
        visible = [n for n in nodes if not _is_blank(n)]
        if len(visible) == 1 and isinstance(visible[0], d.Image):
            image = visible[0]
            return d.Figure(image.alt, image.src, image.title, line, image.alt_refs, image.title_refs, image.target_at)
        return d.Paragraph(nodes, line)

    def math_block(self, token: Token, line: int) -> d.MathBlock:
        """Display math, with the references written in it located by counting ``{{`` from the ``$$``.

        ``$$ {1|3|all}`` opens a formula stepped line by line (lines split at ``\\\\``), as Slidev does."""
        content = token.content
        steps_match = MATH_STEPS_RE.match(content)
        if steps_match and "{{" not in steps_match.group(0):
            spec = steps_match.group(1)
            tex = content[steps_match.end() :]
            n_lines = len(MATH_LINE_RE.split(tex.strip()))
            try:
                steps = tuple(_step(part, n_lines) for part in spec.split("|"))
            except ValueError as exc:
                source = self.lines[line - 1]
                raise self.error(
                    line,
                    source.find("{") + 1,
                    f"bad math steps '{{{spec}}}': {exc}; write lines and ranges like {{1|3|all}}",
                ) from None
            return replace(self.math_block_tex(tex, line), steps=steps)
        return self.math_block_tex(content, line)

    def math_block_tex(self, content: str, line: int) -> d.MathBlock:
        """A formula's TeX and references (the steps before it hold no ``{{``, so counting them from ``$$`` works)."""
        lead = len(content) - len(content.lstrip())
        opening = self.lines[line - 1].find("$$")
        refs = []
        for found in raw_refs(content, "math"):
            nth = content.count("{{", 0, found.start)
            refs.append(raw_ref(found, nth_brace(self.lines, line - 1, opening + 2 if opening >= 0 else 0, nth), lead))
        return d.MathBlock(content.strip(), line, tuple(refs))

    def table(self, inner: list[Token], line: int) -> d.Table:
        rows: list[tuple[tuple[d.Inline, ...], ...]] = []
        aligns: list[str] = []
        row: list[tuple[d.Inline, ...]] = []
        for token in inner:
            if token.type == "th_open":
                style = str(token.attrGet("style") or "")
                aligns.append(style.removeprefix("text-align:"))
            elif token.type == "inline":
                row.append(self.inlines(token, cell=len(row)))
            elif token.type == "tr_close":
                rows.append(tuple(row))
                row = []
        return d.Table(rows[0], tuple(rows[1:]), tuple(aligns), line)

    def html_block(self, token: Token, line: int) -> d.Block | None:
        """Comments vanish, ``<br>`` too; a stray v-click tag is an error; other HTML is kept as written."""
        text = COMMENT_RE.sub("", token.content).strip()
        if not text or BR_RE.fullmatch(text):
            return None
        if text.startswith(("<v-click", "</v-click", "<v-after", "</v-after")):
            at = token.content.find(text.split("\n", 1)[0])
            row = token.content.count("\n", 0, at)
            col = at - token.content.rfind("\n", 0, at)
            raise self.error(line + row, col, _click_tag_problem(text))
        refs = []
        for found in attribute_refs(text):
            nth = text.count("{{", 0, found.start)  # the comments left out hold no reference
            refs.append(raw_ref(found, nth_brace(self.lines, line - 1, 0, nth), 0))
        return htmlkinds.html_block(d.RawHtml(text, line, tuple(refs)))

    def snippet(self, token: Token, line: int) -> d.CodeBlock:
        """``<<< @/a/b.py#region lang {2|3}``: the file's code, as a fenced block of it would be."""
        meta = token.meta
        col = self.lines[line - 1].find("<<<") + 1
        try:
            found = load_snippet(meta["path"], meta["region"], self.path, line, col)
        except SnippetError as exc:
            raise self.error(line, col, str(exc)) from None
        lang, steps, options = self.fence_options(f"{meta['lang'] or found.lang} {meta['braces']}", found.code, line)
        return htmlkinds.code_block(d.CodeBlock(found.code, lang, steps, line, found.path, **_code_fields(options)))

    def fence_info(self, info: str, code: str, line: int) -> tuple[str, tuple[tuple[int, ...], ...]]:
        """``py {2-3|5}`` -> ``("py", ((2, 3), (5,)))``; a bad range is an error at the fence."""
        lang, steps, _ = self.fence_options(info, code, line)
        return lang, steps

    def fence_options(self, info: str, code: str, line: int) -> tuple[str, tuple[tuple[int, ...], ...], dict[str, Any]]:
        """The language, highlight steps and options of a fence's info string.

        Slidev's forms: ```` ```py {2-3|5} ````, ```` ```py {none|1|3-4}{lines:true,startLine:5,at:2} ````,
        ```` ```py {*}{maxHeight:'200px'} ````; ```` ```ts {monaco} ```` is a plain block (``monaco``
        set, for ``check`` to warn). A bad range or option is an error at its brace.
        """
        info = info.strip()
        brace = info.find("{")
        if brace < 0:
            return (info.split()[0] if info else ""), (), {}
        head = info[:brace].split()
        lang = head[0] if head else ""
        source = self.lines[line - 1]
        steps: tuple[tuple[int, ...], ...] = ()
        options: dict[str, Any] = {}
        rest = info[brace:]
        while rest.startswith("{"):
            close = rest.find("}")
            spec = rest[1:close] if close > 0 else rest[1:]
            col = source.find("{" + spec) + 1 or source.find("{") + 1
            try:
                if close < 0:
                    raise ValueError("it has no closing }")
                if ":" in spec:
                    options.update(code_options(spec))
                elif spec.strip().startswith("monaco"):
                    options["monaco"] = True
                else:
                    steps = tuple(_step(part, code.count("\n") + 1) for part in spec.split("|"))
            except ValueError as exc:
                if ":" in spec:
                    raise self.error(
                        line,
                        col,
                        f"bad code block option '{{{spec}}}': {exc}; write options "
                        "like {lines:true,startLine:5,maxHeight:'200px',at:2}",
                    ) from None
                raise self.error(
                    line,
                    col,
                    f"bad highlight range '{{{spec}}}': {exc}; "
                    "write line numbers and ranges like {2-3|5}, {all|2} or {1,4}",
                ) from None
            rest = rest[close + 1 :].lstrip()
        return lang, steps, options

    # ------------------------------------------------------------------ inlines

    def inlines(
        self, parent: Token, children: list[Token] | None = None, cell: int | None = None
    ) -> tuple[d.Inline, ...]:
        """Inline nodes of an ``inline`` token (or of some of its children)."""
        kids = (parent.children or []) if children is None else children
        stack: list[tuple[Token | None, list[d.Inline]]] = [(None, [])]
        cursor = 0  # where the next text run may start, in parent.content
        for token in kids:
            offset = _text_offset(parent.content, token, cursor)
            cursor = _after(token, offset)
            if token.type in _SPANS or token.type == "link_open":
                if len(stack) > MAX_INLINE_NESTING:
                    line, col = self.position(parent, offset, cell)
                    raise self.error(
                        line,
                        col,
                        f"emphasis, links and strikethrough nest more than "
                        f"{MAX_INLINE_NESTING} levels deep here; flatten them",
                    )
                stack.append((token, []))
            elif token.nesting == -1 and len(stack) > 1:
                while len(stack) > 2 and _is_html(stack[-1][0]):
                    _unwind(stack)  # an HTML tag opened inside this span and never closed: text
                opener, nodes = stack.pop()
                if opener is not None:  # only the bottom of the stack has none
                    stack[-1][1].append(self.span(opener, tuple(nodes), parent, cell))
            elif token.type == "html_inline" and self.html_tag(token, stack, parent, offset, cell):
                pass
            else:
                node = self.inline(token, parent, cell, offset)
                if node is not None:
                    stack[-1][1].append(node)
        while len(stack) > 1:
            _unwind(stack)
        return _merge_text(stack[0][1])

    def html_tag(
        self,
        token: Token,
        stack: list[tuple[Token | None, list[d.Inline]]],
        parent: Token,
        offset: int,
        cell: int | None,
    ) -> bool:
        """Pair inline HTML tags into spans: an opening tag opens one, its closing tag closes it.

        Returns ``False`` for what :meth:`inline` handles (comments, ``<br>``, v-click tags, a closing
        tag that closes nothing). A void or self-closing tag is a :class:`~slidegen.deck.nodes.RawInline`, or a
        :class:`~slidegen.deck.nodes.Component` when it names a custom element (written whole: ``<x-y></x-y>``).
        """
        html = token.content
        if html.startswith("<!--") or BR_RE.fullmatch(html) or CLICK_TAG_RE.fullmatch(html):
            return False
        if (opened := rawhtml.opening(html)) is not None:
            if opened[2] and htmlkinds.is_custom_tag(opened[0]):  # <lr-dot alt="x" />: a component all the same
                tag, attrs, _ = opened
                refs = self.tag_refs(html, parent, offset, cell, html.find(attrs) if attrs else 0)
                stack[-1][1].append(htmlkinds.span(tag, attrs, (), refs))
            elif opened[2]:
                stack[-1][1].append(d.RawInline(html, self.tag_refs(html, parent, offset, cell, 0)))
            else:
                stack.append((token, []))
            return True
        name = rawhtml.closing(html)
        depth = next(
            (k for k in range(len(stack) - 1, 0, -1) if not _is_html(stack[k][0]) or _tag_name(stack[k][0]) == name), 0
        )
        if name is None or depth == 0 or not _is_html(stack[depth][0]):
            return False
        while len(stack) - 1 > depth:
            _unwind(stack)
        opener, nodes = stack.pop()
        assert opener is not None
        tag, attrs, _ = rawhtml.opening(opener.content) or (name, "", False)
        at = int(opener.meta.get("offset", 0))
        refs = self.tag_refs(opener.content, parent, at, cell, opener.content.find(attrs) if attrs else 0)
        stack[-1][1].append(htmlkinds.span(tag, attrs, _merge_text(nodes), refs))
        return True

    def tag_refs(self, html: str, parent: Token, offset: int, cell: int | None, lead: int) -> tuple[d.Ref, ...]:
        """The references in the attributes of the tag ``html`` written at ``offset`` of ``parent``'s content;
        spans shifted by ``lead`` (where the attributes start in the tag)."""
        return tuple(
            raw_ref(found, self.position(parent, offset + found.start, cell), lead) for found in attribute_refs(html)
        )

    def span(self, opener: Token, children: tuple[d.Inline, ...], parent: Token, cell: int | None) -> d.Inline:
        if opener.type == "link_open":
            url = str(opener.attrGet("href") or "")
            return d.Link(children, url, str(opener.attrGet("title") or ""), self.target(parent, opener, url, cell))
        return _SPANS[opener.type](children)

    def target(self, parent: Token, token: Token, url: str, cell: int | None) -> tuple[int, int]:
        """Where the link or image target ``url`` is written: after the label's ``](``."""
        start, end = token.meta.get("offset", 0), token.meta.get("end", len(parent.content))
        source = parent.content[start:end]
        close = source.rfind("](", 0, len(source) - len(url) if url else len(source))
        at = source.find(url, close + 2) if close >= 0 and url else -1
        return self.position(parent, start + (at if at >= 0 else max(close + 2, 0)), cell)

    def inline(self, token: Token, parent: Token, cell: int | None, offset: int) -> d.Inline | None:
        kind = token.type
        if kind in ("text", "text_special"):
            if not token.content:
                return None
            line, col = self.position(parent, offset, cell)
            return d.Text(token.content, line, col)
        if kind == "code_inline":
            return d.Code(token.content)
        if kind in ("math_inline", "math_inline_double"):
            return self.math(token, parent, cell)
        if kind == "softbreak":
            return d.SoftBreak()
        if kind == "hardbreak":
            return d.LineBreak()
        if kind == "image":
            return self.image(token, parent, cell)
        if kind == "result_ref":
            return self.ref(token, parent, cell)
        if kind == "cite":
            return self.cite(token, parent, cell)
        if kind == "html_inline":
            return self.html_inline(token, parent, cell)
        if kind == "footnote_ref":
            return d.FootnoteRef(int(token.meta["id"]) + 1, str(token.meta.get("label") or token.meta["id"] + 1))
        return d.Text(token.content) if token.content else None

    def math(self, token: Token, parent: Token, cell: int | None) -> d.Math:
        """Inline math, with the references written in it at their exact columns."""
        content = token.content
        start = token.meta.get("offset", 0) + len(token.markup)
        lead = len(content) - len(content.lstrip())
        refs = tuple(
            raw_ref(found, self.position(parent, start + found.start, cell), lead)
            for found in raw_refs(content, "math")
        )
        return d.Math(content.strip(), refs)

    def image(self, token: Token, parent: Token, cell: int | None) -> d.Image:
        """An image; references in its alt text come from the label's tokens, those in its title by counting."""
        start = token.meta.get("offset", 0)
        alt, alt_refs = self.alt_text(token.children or [], parent, start + 2, cell)
        src, title = str(token.attrGet("src") or ""), str(token.attrGet("title") or "")
        source = parent.content[start : token.meta.get("end", len(parent.content))]
        after = start + max(source.rfind("]("), 0)
        title_refs = []
        for found in raw_refs(title, "plain"):
            braces = found.start + (1 if found.escaped else 0)
            at = _nth(parent.content, "{{", after + len(src), title.count("{{", 0, braces))
            title_refs.append(raw_ref(found, self.position(parent, at - (1 if found.escaped else 0), cell), 0))
        return d.Image(alt, src, title, alt_refs, tuple(title_refs), self.target(parent, token, src, cell))

    def alt_text(
        self, children: list[Token], parent: Token, base: int, cell: int | None
    ) -> tuple[str, tuple[d.Ref, ...]]:
        """An image's alt text as written (references kept raw for the binder), and its references.

        ``base`` is where the label starts in ``parent.content``: the label's tokens are offset within it.
        """
        parts: list[str] = []
        refs: list[d.Ref] = []
        for token in children:
            if token.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif token.type == "image":
                inner, inner_refs = self.alt_text(
                    token.children or [], parent, base + token.meta.get("offset", 0) + 2, cell
                )
                at = len("".join(parts))
                refs += [replace(r, span=(r.span[0] + at, r.span[1] + at)) for r in inner_refs]
                parts.append(inner)
            elif token.type == "math_inline":
                parts.append(f"${token.content}$")
            elif token.type == "result_ref":
                at = len("".join(parts))
                line, col = self.position(parent, base + token.meta["offset"], cell)
                if token.meta["key"] is None:
                    raise self.error(line, col, MALFORMED_REF.format(token.content))
                refs.append(
                    d.Ref(
                        token.meta["key"],
                        token.meta["filters"],
                        line,
                        col,
                        span=(at, at + len(token.content)),
                        raw=token.content,
                    )
                )
                parts.append(token.content)
            elif token.nesting == 0:
                parts.append(token.content)
        return "".join(parts), tuple(refs)

    def ref(self, token: Token, parent: Token, cell: int | None) -> d.Ref:
        line, col = self.position(parent, token.meta["offset"], cell)
        if token.meta["key"] is None:
            raise self.error(line, col, MALFORMED_REF.format(token.content))
        return d.Ref(token.meta["key"], token.meta["filters"], line, col)

    def cite(self, token: Token, parent: Token, cell: int | None) -> d.Cite:
        """A citation, each work at the file position of its ``@``."""
        items = tuple(
            d.CiteItem(key, locator, prefix, *self.position(parent, at, cell))
            for key, locator, prefix, at in token.meta["items"]
        )
        return d.Cite(items, bool(token.meta["in_text"]), *self.position(parent, token.meta["offset"], cell))

    def html_inline(self, token: Token, parent: Token, cell: int | None) -> d.Inline | None:
        html = token.content
        if html.startswith("<!--"):
            return None
        if BR_RE.fullmatch(html):
            return d.LineBreak()
        if CLICK_TAG_RE.fullmatch(html):
            line, col = self.position(parent, max(parent.content.find(html), 0), cell)
            raise self.error(line, col, _click_tag_problem(parent.content[parent.content.find(html) :]))
        return d.Text(html)

    def position(self, parent: Token, offset: int, cell: int | None) -> tuple[int, int]:
        """1-based file (line, column) of ``offset`` in an inline token's content."""
        content = parent.content
        row = content.count("\n", 0, offset)
        start = content.rfind("\n", 0, offset) + 1
        end = content.find("\n", offset)
        piece = content[start : end if end >= 0 else len(content)]
        index = self.line0 + (parent.map[0] if parent.map else 0) + row
        source = self.lines[index] if index < len(self.lines) else ""
        if cell is not None:
            return index + 1, _cell_column(source, cell, offset - start)
        return index + 1, _locate(source, piece) + offset - start + 1


# ---------------------------------------------------------------------- helpers


def _is_html(token: Token | None) -> bool:
    return token is not None and token.type == "html_inline"


def _tag_name(token: Token | None) -> str | None:
    opened = rawhtml.opening(token.content) if token is not None else None
    return opened[0] if opened else None


def _unwind(stack: list[tuple[Token | None, list[d.Inline]]]) -> None:
    """The HTML tag on top of ``stack`` closes nothing: it becomes text, its content joins its parent's."""
    opener, nodes = stack.pop()
    stack[-1][1].extend([d.Text(opener.content if opener is not None else ""), *nodes])


def _closing(tokens: list[Token], i: int) -> int:
    """Index of the token closing ``tokens[i]``."""
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        if tokens[j].nesting == -1 and tokens[j].level == level:
            return j
    return len(tokens) - 1


def nth_brace(lines: list[str], row: int, col: int, n: int) -> tuple[int, int]:
    """1-based (line, col) of the ``n``-th (from 0) ``{{`` in ``lines`` from 0-based ``row``, ``col`` on.

    Raw text (math, a YAML value) keeps every ``{{`` of its source in order, so counting
    them finds a reference's place in the file. Past the last line: the starting point.
    """
    for number in range(row, len(lines)):
        text = lines[number]
        at = text.find("{{", col if number == row else 0)
        while at >= 0:
            if n == 0:
                return number + 1, at + 1
            n -= 1
            at = text.find("{{", at + 2)
    return row + 1, col + 1


def raw_ref(found: RawRef, at: tuple[int, int], lead: int) -> d.Ref:
    """A reference found in raw text at file position ``at``; its span shifted by ``lead`` stripped characters.

    An escaped ``\\{{ x }}`` (plain text) becomes the literal ``"{{ x }}"``, printing the braces;
    a malformed one has an empty key, for binding to report.
    """
    span = (found.start - lead, found.end - lead)
    if found.escaped:
        return d.Ref(f'"{found.raw[1:]}"', (), *at, span=span, raw=found.raw)
    key, filters = found.parsed or ("", ())
    return d.Ref(key, filters, *at, span=span, raw=found.raw)


def _nth(text: str, needle: str, start: int, n: int) -> int:
    """Offset of the ``n``-th (from 0) ``needle`` in ``text`` from ``start`` on; ``start`` when there is none."""
    at = text.find(needle, start)
    for _ in range(n):
        if at < 0:
            break
        at = text.find(needle, at + len(needle))
    return at if at >= 0 else start


def _text_offset(content: str, token: Token, cursor: int) -> int:
    """Where a token starts in its inline source: text runs are found from ``cursor``, others carry their offset."""
    if token.type not in ("text", "text_special"):
        return int(token.meta.get("offset", cursor))
    found = content.find(token.content, cursor) if token.content else -1
    return found if found >= 0 else cursor


def _after(token: Token, offset: int) -> int:
    """Where the text after ``token`` may start."""
    if token.type in ("text", "text_special"):
        return offset + len(token.content)
    if token.type == "link_open":
        return offset + 1  # the label follows the [
    return int(token.meta.get("end", offset))


def _merge_text(nodes: list[d.Inline]) -> tuple[d.Inline, ...]:
    """Join neighbouring Text nodes (markdown-it splits text at escapes and entities)."""
    out: list[d.Inline] = []
    for node in nodes:
        if isinstance(node, d.Text) and out and isinstance(out[-1], d.Text):
            out[-1] = replace(out[-1], text=out[-1].text + node.text)
        else:
            out.append(node)
    return tuple(out)


def _is_blank(node: d.Inline) -> bool:
    return isinstance(node, d.SoftBreak) or (isinstance(node, d.Text) and not node.text.strip())


def _rstrip(nodes: tuple[d.Inline, ...]) -> tuple[d.Inline, ...]:
    """Drop the trailing space a removed ``<!-- comment -->`` leaves at the end of a block."""
    if nodes and isinstance(nodes[-1], d.Text) and nodes[-1].text != nodes[-1].text.rstrip():
        text = nodes[-1].text.rstrip()
        return nodes[:-1] + ((d.Text(text),) if text else ())
    return nodes


def _click_wrapper(children: list[Token]) -> tuple[str, str, list[Token]] | None:
    """``<v-click>...</v-click>`` wrapping a whole paragraph -> (tag name, its attributes, the tokens inside)."""
    shown = [i for i, t in enumerate(children) if not (t.type == "text" and not t.content.strip())]
    if len(shown) < 2:
        return None
    first, last = children[shown[0]], children[shown[-1]]
    opening = CLICK_TAG_RE.fullmatch(first.content) if first.type == "html_inline" else None
    closing = CLICK_TAG_RE.fullmatch(last.content) if last.type == "html_inline" else None
    if not (opening and closing) or opening.group(1) or not closing.group(1):
        return None
    if opening.group(2) != closing.group(2):
        return None
    inner = children[shown[0] + 1 : shown[-1]]
    breaks = ("softbreak", "hardbreak")
    while inner and inner[0].type in breaks:
        inner.pop(0)
    while inner and inner[-1].type in breaks:
        inner.pop()
    return opening.group(2), opening.group(3) or "", inner


def _click_tag_problem(text: str) -> str:
    """What is wrong with a v-click tag the block rule could not pair, and what to do."""
    match = CLICK_TAG_RE.match(text)
    if match and match.group(1):
        return f"'</{match.group(2)}>' closes nothing; remove it, or open it with <{match.group(2)}> alone on a line"
    if match:
        name = match.group(2)
        if f"</{name}>" in text:
            return (
                f"<{name}> must wrap whole blocks: put <{name}> and </{name}> on lines of "
                "their own, or around a whole paragraph"
            )
        return f"unclosed <{name}> opened here; close it with </{name}> alone on a line"
    return "unsupported click tag: write <v-click>, <v-clicks>, <v-after> or <v-click-hide>"


def _step(part: str, n_lines: int) -> tuple[int, ...]:
    """One highlight step: ``all``/``*`` -> ``()``, ``1-3,5`` -> ``(1, 2, 3, 5)``."""
    part = part.strip()
    if part in ("all", "*"):
        return ()
    if part == "none":
        return NO_LINES
    numbers: list[int] = []
    for item in part.split(","):
        match = STEP_RE.fullmatch(item.strip())
        if not match:
            raise ValueError(f"'{item.strip()}' is not a line number or range")
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if first < 1 or last < first:
            raise ValueError(f"'{item.strip()}' is not an increasing range of lines from 1")
        if last > n_lines:
            raise ValueError(f"line {last} is past the end of the {n_lines}-line code block")
        numbers.extend(range(first, last + 1))
    return tuple(numbers)


def _strip_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def _locate(source: str, piece: str) -> int:
    """Where ``piece`` (one line of an inline token's content) sits in its source line."""
    tail = piece.rstrip()
    stripped = source.rstrip()
    if tail and stripped.endswith(tail):
        return len(stripped) - len(tail)
    found = source.find(piece)
    return found if found >= 0 else len(source) - len(source.lstrip())


def _cell_column(source: str, cell: int, offset: int) -> int:
    """1-based column of ``offset`` in the content of table cell ``cell`` of a row line."""
    spans = _cell_spans(source)
    if cell >= len(spans):
        return 1
    start, end = spans[cell]
    pos = start + len(source[start:end]) - len(source[start:end].lstrip())
    for _ in range(offset):  # an escaped pipe is two source characters, one in the content
        pos += 2 if source.startswith("\\|", pos) else 1
    return pos + 1


def _cell_spans(row: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each cell of a GFM table row, pipes in ``{{ }}`` and ``\\|`` kept."""
    refs = ref_spans(row)
    begin = len(row) - len(row.lstrip())
    finish = len(row.rstrip())
    spans: list[tuple[int, int]] = []
    start, pos = begin, begin
    while pos < finish:
        inside = next((end for s, end in refs if s <= pos < end), None)
        if inside is not None:
            pos = inside
            continue
        if row.startswith("\\|", pos):
            pos += 2
            continue
        if row[pos] == "|":
            spans.append((start, pos))
            start = pos + 1
        pos += 1
    spans.append((start, finish))
    if spans and spans[0][0] == spans[0][1]:
        spans.pop(0)
    if spans and spans[-1][0] == spans[-1][1]:
        spans.pop()
    return spans


#: The attributes each click tag takes (Slidev's props), beyond which a tag is an error.
CLICK_ATTRS = {
    "v-click": {"at", "hide", "fade"},
    "v-after": {"at", "hide", "fade"},
    "v-click-hide": {"at", "fade"},
    "v-clicks": {"at", "hide", "fade", "depth", "every"},
}
ATTR_RE = re.compile(r"""([A-Za-z_:][\w:.-]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")


def click_options(name: str, attrs: str) -> dict[str, Any]:
    """``<v-clicks depth="2" every="2">``'s attributes as :class:`~.nodes.Click` fields; ValueError if bad."""
    from slidegen.deck import clicks

    found: dict[str, str] = {}
    for match in ATTR_RE.finditer(attrs):
        key = match.group(1)
        if key not in CLICK_ATTRS[name]:
            allowed = ", ".join(sorted(CLICK_ATTRS[name]))
            raise ValueError(f"unsupported attribute '{key}' (it takes {allowed})")
        found[key] = next((g for g in match.groups()[1:] if g is not None), "")
    options: dict[str, Any] = {"hide": name == "v-click-hide" or "hide" in found, "fade": "fade" in found}
    at = found.get("at", "+0" if name == "v-after" else "")
    clicks.parse_at(at)
    options["at"] = at
    for key in ("depth", "every"):
        if key in found:
            if not found[key].isdigit() or int(found[key]) < 1:
                raise ValueError(f'{key}="{found[key]}" is not a whole number from 1')
            options[key] = int(found[key])
    return options


def code_options(spec: str) -> dict[str, Any]:
    """Slidev's code block options (``lines:true,startLine:5,maxHeight:'200px',at:2``); ValueError if bad."""
    from slidegen.deck import clicks

    out: dict[str, Any] = {}
    pos = 0
    spec = spec.strip()
    while pos < len(spec):
        match = OPTION_RE.match(spec, pos)
        if not match or match.end() == pos:
            raise ValueError(f"cannot read '{spec[pos:]}' as key:value")
        key, raw = match.group(1), match.group(2).strip()
        value = raw[1:-1] if raw[:1] in "'\"" else raw
        if key == "lines":
            if value not in ("true", "false"):
                raise ValueError("lines takes true or false")
            out["lines"] = value == "true"
        elif key == "startLine":
            if not value.isdigit():
                raise ValueError("startLine takes a whole number")
            out["startLine"] = int(value)
        elif key == "maxHeight":
            if not CSS_LENGTH_RE.fullmatch(value):
                raise ValueError(f"maxHeight takes a CSS length like '200px', not {raw}")
            out["maxHeight"] = value
        elif key == "at":
            quoted = raw[:1] in "'\""
            clicks.parse_at(value)
            out["at"] = value if quoted else str(int(value))  # a JavaScript number: absolute
        else:
            raise ValueError(f"unknown option '{key}' (slidegen reads lines, startLine, maxHeight and at)")
        pos = match.end()
    return out


def _code_fields(options: dict[str, Any]) -> dict[str, Any]:
    """Code block options as :class:`~slidegen.deck.nodes.CodeBlock` fields."""
    fields: dict[str, Any] = {}
    if "lines" in options:
        fields["line_numbers"] = options["lines"]
    if "startLine" in options:
        fields["start_line"] = options["startLine"]
    if "maxHeight" in options:
        fields["max_height"] = options["maxHeight"]
    if "at" in options:
        fields["at"] = options["at"]
    if options.get("monaco"):
        fields["monaco"] = True
    return fields


def attribute_refs(html: str) -> list[RawRef]:
    """The result references written inside the opening tags of ``html`` (in attribute values), in order.

    References in the text between tags are left alone: raw HTML is the author's, as written.
    """
    tags = [(m.start(), m.end()) for m in rawhtml.OPEN_RE.finditer(html)]
    return [
        ref
        for ref in raw_refs(html)
        if not ref.escaped and any(start <= ref.start and ref.end <= end for start, end in tags)
    ]
