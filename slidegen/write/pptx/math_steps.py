"""A formula's line steps in PowerPoint (``$$ {1|3|all}``): one copy of the equation per step.

The rows of a multi-line formula are those of its outermost matrix in OMML (``aligned``,
``cases``, ``array``, and a plain ``a \\\\ b``, which :func:`slidegen.write.pptx.omml.latex_to_omml`
makes one): in each copy the rows outside its step are dimmed, their runs coloured
:data:`DIM` of the way toward the slide background (an ``a:rPr`` colour, which PowerPoint
draws and LibreOffice 7 ignores; ``opacity`` has no OMML form). An equation has no background, so copies
cannot stack as code steps do: each copy is on the slide from its step's click until the
next step's, the first from the start, the last to the end. A step of all rows (``{all}``)
dims none, ``{none}`` every row. The fallback picture stays the whole formula, undimmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from lxml import etree  # type: ignore[import-untyped]

from slidegen.write.pptx.code_steps import mix
from slidegen.write.pptx.model import Equation, Shape
from slidegen.write.pptx.omml import A, M

#: How far a dimmed row's colour moves toward the background (the HTML draws it at ``opacity: 0.3``).
DIM = 0.7


def with_steps(shapes: Sequence[Shape], background: str) -> list[Shape]:
    """``shapes`` with each equation that has line steps replaced by its copies (:func:`copies`)."""
    out: list[Shape] = []
    for shape in shapes:
        out += copies(shape, background) if isinstance(shape, Equation) and len(shape.steps) > 1 else [shape]
    return out


def copies(eq: Equation, background: str) -> list[Equation]:
    """One copy of ``eq`` per step, each shown from its step's click until the next step's."""
    starts = [0, *eq.clicks][: len(eq.steps)]
    dim = mix(eq.color, background, DIM).lstrip("#")
    size = int(eq.size.pt * 100)
    out = []
    for number, (step, start) in enumerate(zip(eq.steps, starts, strict=True)):
        last = number == len(starts) - 1
        end = eq.vanish if last else (min(eq.vanish, starts[number + 1]) if eq.vanish else starts[number + 1])
        out.append(
            replace(
                eq, omml=dimmed(eq.omml, step, dim, size), appear=max(start, eq.appear), vanish=end, steps=(), clicks=()
            )
        )
    return out


def rows(omml: str) -> int:
    """How many rows the formula has (1 without a matrix)."""
    matrix = _matrix(etree.fromstring(omml))
    return 1 if matrix is None else len(matrix.findall(f"{{{M}}}mr"))


@lru_cache(maxsize=256)
def dimmed(omml: str, step: tuple[int, ...], color: str, size: int) -> str:
    """``omml`` with the rows outside ``step`` (1-based; empty: all rows) coloured ``color`` (``rrggbb``) at
    ``size`` (hundredths of a point); :func:`slidegen.write.pptx.omml.styled_omath` styles the other runs."""
    if not step:
        return omml
    omath = etree.fromstring(omml)
    matrix = _matrix(omath)
    lit = set(step)
    found = matrix.findall(f"{{{M}}}mr") if matrix is not None else [omath]
    for number, row in enumerate(found, start=1):
        if number in lit:
            continue
        for run in row.iter(f"{{{M}}}r"):
            rpr = etree.Element(f"{{{A}}}rPr", {"lang": "en-US", "sz": str(size), "i": "1"}, nsmap={"a": A})
            fill = etree.SubElement(rpr, f"{{{A}}}solidFill")
            etree.SubElement(fill, f"{{{A}}}srgbClr").set("val", color)
            etree.SubElement(rpr, f"{{{A}}}latin").set("typeface", "Cambria Math")
            run.insert(1 if run.find(f"{{{M}}}rPr") is not None else 0, rpr)
    etree.cleanup_namespaces(omath, top_nsmap={"a": A})  # one xmlns:a, on m:oMath
    return str(etree.tostring(omath, encoding="unicode"))


def _matrix(omath: etree._Element) -> etree._Element | None:
    """The outermost ``m:m`` (the first in document order)."""
    return next(omath.iter(f"{{{M}}}m"), None)
