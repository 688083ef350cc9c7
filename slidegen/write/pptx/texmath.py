"""TeX for PowerPoint without XML: inline math as styled text runs, display math as a fallback PNG.

Inline math cannot be an equation object (LibreOffice shows it blank beside text), so
``$\\alpha_t^2$`` becomes text runs: ``α`` italic, ``t`` lowered, ``2`` raised
(:func:`tex_to_runs`); the notes, which are plain text, read ``αₜ²`` (:func:`tex_to_unicode`).
Display math gets a picture drawn by matplotlib's mathtext: the equation's fallback for old
viewers and the source of its size.
"""

from __future__ import annotations

import itertools
import re
import struct
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from io import BytesIO

GREEK = (
    "alpha:α beta:β gamma:γ delta:δ epsilon:ϵ varepsilon:ε zeta:ζ eta:η theta:θ vartheta:ϑ "
    "iota:ι kappa:κ lambda:λ mu:μ nu:ν xi:ξ pi:π rho:ρ sigma:σ tau:τ upsilon:υ phi:ϕ "
    "varphi:φ chi:χ psi:ψ omega:ω Gamma:Γ Delta:Δ Theta:Θ Lambda:Λ Xi:Ξ Pi:Π Sigma:Σ "
    "Phi:Φ Psi:Ψ Omega:Ω"
)
SYMBOLS = (
    "cdot:· times:× pm:± mp:∓ div:÷ le:≤ leq:≤ ge:≥ geq:≥ ne:≠ neq:≠ approx:≈ sim:∼ "
    "simeq:≃ equiv:≡ propto:∝ infty:∞ sum:∑ prod:∏ int:∫ partial:∂ nabla:∇ to:→ "
    "rightarrow:→ leftarrow:← Rightarrow:⇒ Leftrightarrow:⇔ mapsto:↦ in:∈ notin:∉ "
    "subset:⊂ subseteq:⊆ cup:∪ cap:∩ forall:∀ exists:∃ ldots:… cdots:⋯ dots:… mid:∣ "
    "ell:ℓ langle:⟨ rangle:⟩ lVert:‖ rVert:‖ Vert:‖ odot:⊙ otimes:⊗ oplus:⊕ circ:∘ "
    "star:⋆ ast:∗ top:⊤ emptyset:∅ neg:¬ land:∧ lor:∨ prime:′ dagger:†"
)
FUNCTIONS = "log ln exp sin cos tan tanh max min arg argmax argmin sup inf lim det dim softmax"
UNICODE = dict(pair.split(":") for pair in f"{GREEK} {SYMBOLS}".split())
UNICODE.update({name: name for name in FUNCTIONS.split()})
UNICODE.update({",": "\u2009", ";": " ", ":": " ", " ": " ", "!": "", "quad": " ", "qquad": "  "})
UNICODE.update({c: c for c in "{}%$#&_"})
UNICODE["|"] = "‖"
STYLE_COMMANDS = {
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "text",
    "textrm",
    "textbf",
    "textit",
    "operatorname",
    "boldsymbol",
    "bm",
    "mathcal",
    "mathbb",
}
ACCENTS = {
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "bar": "\u0304",
    "overline": "\u0305",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
}
IGNORED = {"left", "right", "big", "Big", "bigg", "Bigg", "displaystyle", "limits", "nolimits"}
SUPERSCRIPTS = dict(zip("0123456789+-−=()niT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵀ", strict=True))
SUBSCRIPTS = dict(zip("0123456789+-−=()aeoxhklmnpstij", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼ", strict=True))
TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)
UPRIGHT = {"mathrm", "text", "textrm", "operatorname", "mathsf", "mathtt", "textbf", "mathbf", "mathcal", "mathbb"}
BOLD = {"mathbf", "textbf", "boldsymbol", "bm"}
ITALIC = {"mathit", "textit"}
#: Characters math sets differently from text: the minus sign, the asterisk operator, the prime.
MATH_CHARS = {"-": "−", "*": "∗", "'": "′"}


#: Deeper groups and script chains than this are left as their source (the parser recurses).
MAX_DEPTH = 40


class _Unsupported(Exception):
    pass


@dataclass(frozen=True)
class Piece:
    """A stretch of inline math with one look; ``scripts`` says where it sits: ``()`` on the line,
    ``(1,)`` raised, ``(-1,)`` lowered, ``(1, 1)`` a superscript's superscript...

    Letters are italic as TeX sets them (Latin letters and lowercase Greek), except inside
    ``\\mathrm``, ``\\text`` and ``\\operatorname``; digits, operators and function names are upright.
    """

    text: str
    italic: bool = False
    bold: bool = False
    scripts: tuple[int, ...] = ()

    @property
    def baseline(self) -> int:
        """PowerPoint's run baseline in 1/1000 %: 30% up per superscript, 25% down per subscript."""
        return sum(30000 if s > 0 else -25000 for s in self.scripts)


@dataclass(frozen=True)
class _Look:
    upright: bool = False
    italic: bool = False
    bold: bool = False
    scripts: tuple[int, ...] = ()


def _depth(tokens: list[str]) -> int:
    """An upper bound on how deep :func:`_group` recurses for ``tokens``: open braces, plus
    the scripts and commands that take an argument in a row."""
    deepest = depth = chain = 0
    for token in tokens:
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        if token in ("^", "_") or (token.startswith("\\") and token[1:] not in UNICODE):
            chain += 1
        elif not token.isspace() and token != "{":
            chain = 0
        deepest = max(deepest, depth + chain)
    return deepest


@lru_cache(maxsize=1024)
def tex_to_runs(tex: str) -> tuple[Piece, ...]:
    """Inline TeX as pieces of text with their looks (``p_y`` -> ``p`` italic, ``y`` italic lowered);
    the source as one piece when it is not simple TeX."""
    tokens = list(TOKEN.findall(tex))
    if _depth(tokens) > MAX_DEPTH:
        return (Piece(tex),)
    tokens.reverse()
    try:
        pieces = _group(tokens, None, _Look())
    except (_Unsupported, IndexError):
        return (Piece(tex),)
    return _tidy(pieces)


@lru_cache(maxsize=1024)
def tex_to_unicode(tex: str) -> str:
    """Readable plain text for simple TeX (``\\alpha^2`` -> ``α²``); the source when it is not simple."""
    return unicodedata.normalize("NFC", _plain(list(tex_to_runs(tex)), 0))


def _plain(pieces: list[Piece], level: int) -> str:
    """Pieces at ``level`` scripts deep and below as text: scripts in Unicode's script letters
    when it has them all (``x²``), else marked (``x^(a+b)``)."""
    out: list[str] = []
    for sign, group in itertools.groupby(pieces, key=lambda p: p.scripts[level] if len(p.scripts) > level else 0):
        run = list(group)
        if sign == 0:
            out.append("".join(p.text for p in run))
            continue
        text = _plain(run, level + 1)
        table, mark = (SUPERSCRIPTS, "^") if sign > 0 else (SUBSCRIPTS, "_")
        out.append(
            "".join(table[ch] for ch in text) if all(ch in table for ch in text) else f"{mark}{_wrap_text(text)}"
        )
    return "".join(out)


def _tidy(pieces: list[Piece]) -> tuple[Piece, ...]:
    """Runs of white space as one space, none at the ends, and neighbours with one look merged."""
    out: list[Piece] = []
    for piece in pieces:
        text = re.sub(r"\s+", " ", piece.text)
        if not text or (text == " " and (not out or out[-1].text.endswith(" "))):
            continue
        if out and (out[-1].italic, out[-1].bold, out[-1].scripts) == (piece.italic, piece.bold, piece.scripts):
            out[-1] = replace(out[-1], text=out[-1].text + text)
        else:
            out.append(replace(piece, text=text))
    if out:
        out[0] = replace(out[0], text=out[0].text.lstrip())
        out[-1] = replace(out[-1], text=out[-1].text.rstrip())
    return tuple(piece for piece in out if piece.text)


def _group(tokens: list[str], closing: str | None, look: _Look) -> list[Piece]:
    out: list[Piece] = []
    while tokens:
        token = tokens.pop()
        if token == closing:
            return out
        out += _atom_from(token, tokens, look)
    if closing is not None:
        raise _Unsupported("unbalanced braces")
    return out


def _atom(tokens: list[str], look: _Look) -> list[Piece]:
    """The next argument: a braced group or one token (spaces skipped)."""
    while tokens and tokens[-1].isspace():
        tokens.pop()
    return _atom_from(tokens.pop(), tokens, look)


def _char(text: str, look: _Look, letter: bool) -> Piece:
    italic = look.italic or (letter and not look.upright)
    return Piece(text, italic, look.bold, look.scripts)


def _atom_from(token: str, tokens: list[str], look: _Look) -> list[Piece]:
    if token == "{":
        return _group(tokens, "}", look)
    if token.isspace() or token == "~":
        return [Piece(" ", scripts=look.scripts)]
    if token in ("^", "_"):
        return _atom(tokens, replace(look, scripts=(*look.scripts, 1 if token == "^" else -1)))
    if token in ("&", "}"):
        raise _Unsupported(token)
    if not token.startswith("\\"):
        is_letter = token.isascii() and token.isalpha()
        return [_char(MATH_CHARS.get(token, token) if not look.upright else token, look, is_letter)]
    name = token[1:]
    if name in UNICODE:
        text = UNICODE[name]
        return [_char(text, look, letter=len(text) == 1 and text.isalpha() and text.islower())]
    if name in UPRIGHT or name in BOLD or name in ITALIC:
        inner = replace(
            look,
            upright=name in UPRIGHT or (look.upright and name not in ITALIC),
            italic=name in ITALIC or (name in ("boldsymbol", "bm") and look.italic),
            bold=look.bold or name in BOLD,
        )
        return _atom(tokens, inner)
    if name in ACCENTS:
        base = _atom(tokens, look)
        if len(base) != 1 or len(base[0].text) != 1:
            raise _Unsupported(token)
        return [replace(base[0], text=base[0].text + ACCENTS[name])]
    if name in ("frac", "dfrac", "tfrac"):
        num, den = _atom(tokens, look), _atom(tokens, look)
        return [*_wrap(num, look, loose=True), Piece("/", scripts=look.scripts), *_wrap(den, look, loose=True)]
    if name == "sqrt":
        return [Piece("√", scripts=look.scripts), *_wrap(_atom(tokens, look), look)]
    if name in IGNORED:
        if tokens and tokens[-1] == ".":
            tokens.pop()
        return []
    raise _Unsupported(token)


def _wrap(pieces: list[Piece], look: _Look, loose: bool = False) -> list[Piece]:
    """``pieces`` in parentheses unless they read as one unit (``loose``: any run of letters or digits)."""
    line = "".join(p.text for p in pieces if p.scripts == look.scripts).strip().lstrip("√")
    scripted = any(p.scripts != look.scripts for p in pieces)
    bare = len(line) == 1 or line.isdigit() or (loose and line.isalnum() and not scripted)
    if bare:
        return pieces
    return [Piece("(", scripts=look.scripts), *pieces, Piece(")", scripts=look.scripts)]


def _wrap_text(text: str) -> str:
    """A script's text in parentheses for plain text, unless it is one character or a number."""
    return text if len(text) == 1 or text.isdigit() else f"({text})"


# --------------------------------------------------------------------------- fallback pictures

DPI = 200


@lru_cache(maxsize=512)
def render_png(tex: str, size_pt: float, color: str = "#000000") -> bytes:
    """A tight, transparent PNG of ``tex`` at ``size_pt`` and :data:`DPI`, drawn by mathtext.

    What mathtext cannot draw (``aligned``, matrices...) is drawn row by row, each row as
    math when it can be, else as its source. Uses mathtext's rasteriser directly: no
    figure, which would cost a second of imports.
    """
    import numpy as np
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties
    from PIL import Image

    parser = mathtext.MathTextParser("agg")
    prop = FontProperties(size=size_pt, math_fontfamily="cm")

    def draw(text: str) -> np.ndarray | None:
        try:
            return np.asarray(parser.parse(text, dpi=DPI, prop=prop).image)
        except (ValueError, RecursionError):  # not mathtext, or nested past its parser's reach
            return None

    tex = re.sub(r"\\frac(?![a-z])", r"\\dfrac", tex)  # Office draws display math: full-size fractions
    drawn = [draw(f"${tex}$") if "\\\\" not in tex else None]  # mathtext has no line breaks
    if drawn[0] is None:  # line by line, each as math or else as text
        drawn = []
        for row in re.sub(r"\\(begin|end)\{[a-z*]+\}(\{[^}]*\})?", "", tex).split("\\\\"):
            row = row.replace("&", "").strip()
            image = draw(f"${row}$")
            drawn.append(image if image is not None else draw(row.replace("$", r"\$")))
    rows = [r for r in drawn if r is not None and r.size]
    if not rows:  # nothing drew: the source as text, else an empty picture
        source = draw(tex.replace("$", r"\$"))
        rows = [source if source is not None and source.size else np.zeros((1, 1), np.uint8)]
    pad, gap = 6, DPI // 10
    width = max(r.shape[1] for r in rows) + 2 * pad
    alpha = np.zeros((sum(r.shape[0] for r in rows) + gap * (len(rows) - 1) + 2 * pad, width), np.uint8)
    y = pad
    for r in rows:
        x = (width - r.shape[1]) // 2
        alpha[y : y + r.shape[0], x : x + r.shape[1]] = r
        y += r.shape[0] + gap
    rgba = np.zeros((*alpha.shape, 4), np.uint8)
    rgba[..., :3] = [int(color.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4)]
    rgba[..., 3] = alpha
    buf = BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height in pixels, read from a PNG's header."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height
