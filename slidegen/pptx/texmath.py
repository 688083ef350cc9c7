"""TeX for PowerPoint without XML: inline math as Unicode text, display math as a fallback PNG.

Inline math cannot be an equation object (LibreOffice shows it blank beside text), so
``$\\alpha_t^2$`` becomes the readable run ``αₜ²``. Display math gets a picture drawn by
matplotlib's mathtext: the equation's fallback for old viewers and the source of its size.
"""

from __future__ import annotations

import re
import struct
import unicodedata
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
STYLE_COMMANDS = {"mathrm", "mathbf", "mathit", "mathsf", "mathtt", "text", "textrm", "textbf",
                  "textit", "operatorname", "boldsymbol", "bm", "mathcal", "mathbb"}
ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303", "bar": "\u0304",
           "overline": "\u0305", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308"}
IGNORED = {"left", "right", "big", "Big", "bigg", "Bigg", "displaystyle", "limits", "nolimits"}
SUPERSCRIPTS = dict(zip("0123456789+-=()niT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵀ", strict=True))
SUBSCRIPTS = dict(zip("0123456789+-=()aeoxhklmnpstij", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼ", strict=True))
TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)


#: Deeper groups and script chains than this are left as their source (the parser recurses).
MAX_DEPTH = 40


class _Unsupported(Exception):
    pass


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
def tex_to_unicode(tex: str) -> str:
    """Readable plain text for simple TeX (``\\alpha^2`` -> ``α²``); the source when it is not simple."""
    tokens = [t for t in TOKEN.findall(tex)]
    if _depth(tokens) > MAX_DEPTH:
        return tex
    tokens.reverse()
    try:
        text = _group(tokens, closing=None)
    except (_Unsupported, IndexError):
        return tex
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", text).strip())


def _group(tokens: list[str], closing: str | None) -> str:
    out: list[str] = []
    while tokens:
        token = tokens.pop()
        if token == closing:
            return "".join(out)
        out.append(_atom_from(token, tokens))
    if closing is not None:
        raise _Unsupported("unbalanced braces")
    return "".join(out)


def _atom(tokens: list[str]) -> str:
    """The next argument: a braced group or one token (spaces skipped)."""
    while tokens and tokens[-1].isspace():
        tokens.pop()
    return _atom_from(tokens.pop(), tokens)


def _atom_from(token: str, tokens: list[str]) -> str:
    if token == "{":
        return _group(tokens, closing="}")
    if token.isspace():
        return " "
    if token in ("^", "_"):
        return _script(_atom(tokens), SUPERSCRIPTS if token == "^" else SUBSCRIPTS, token)
    if token == "~":
        return " "
    if token in ("&", "}"):
        raise _Unsupported(token)
    if not token.startswith("\\"):
        return token
    name = token[1:]
    if name in UNICODE:
        return UNICODE[name]
    if name in STYLE_COMMANDS:
        return _atom(tokens)
    if name in ACCENTS:
        base = _atom(tokens)
        if len(base) != 1:
            raise _Unsupported(token)
        return base + ACCENTS[name]
    if name == "frac" or name == "dfrac" or name == "tfrac":
        num, den = _atom(tokens), _atom(tokens)
        return f"{_wrap(num, loose=True)}/{_wrap(den, loose=True)}"
    if name == "sqrt":
        return "√" + _wrap(_atom(tokens))
    if name in IGNORED:
        if tokens and tokens[-1] == ".":
            tokens.pop()
        return ""
    raise _Unsupported(token)


def _wrap(text: str, loose: bool = False) -> str:
    """``text`` in parentheses unless it reads as one unit (``loose``: any run of letters or digits)."""
    scripts = set(SUPERSCRIPTS.values()) | set(SUBSCRIPTS.values())
    core = text.lstrip("√")
    bare = (len(core) == 1 or core.isdigit() or (loose and core.isalnum())
            or (core[:1].isalnum() and all(ch in scripts for ch in core[1:])))
    return text if bare else f"({text})"


def _script(text: str, table: dict[str, str], mark: str) -> str:
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    return f"{mark}{_wrap(text)}"


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
    drawn = [draw(f"${tex}$")]
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
        alpha[y:y + r.shape[0], x:x + r.shape[1]] = r
        y += r.shape[0] + gap
    rgba = np.zeros((*alpha.shape, 4), np.uint8)
    rgba[..., :3] = [int(color.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]
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
