"""The one look of every figure: the deck theme's fonts and colours, sized for a projector.

The renderer draws each figure inside ``matplotlib.rc_context(rc())``; figure code
starts from :func:`new_figure`. Figures are 9.6 x 5.4 in (16:9), about their size on a
slide, so 18 pt labels read like the slide's own text from the back of a room. Lines
cycle through the Okabe-Ito palette of :mod:`slidegen.theme`, safe for colour-blind
viewers. Nothing here imports matplotlib until it is called.
"""

from __future__ import annotations

from typing import Any

from slidegen import theme

WIDTH_IN, HEIGHT_IN = 9.6, 5.4
FONT_PT = 18
LINE_WIDTH = 2.5
GRID = "#e4e7eb"
#: Carlito is metric-compatible with Calibri (the decks' font) and ships with Debian.
SANS = ["Carlito", "Calibri", "Liberation Sans", "DejaVu Sans"]


def rc() -> dict[str, Any]:
    """matplotlib rcParams for every figure."""
    from cycler import cycler

    return {
        "font.family": "sans-serif",
        "font.sans-serif": _installed(SANS),
        "font.size": FONT_PT,
        "axes.titlesize": FONT_PT + 2,
        "axes.titleweight": "bold",
        "axes.titlelocation": "left",
        "axes.labelsize": FONT_PT,
        "xtick.labelsize": FONT_PT - 2,
        "ytick.labelsize": FONT_PT - 2,
        "legend.fontsize": FONT_PT - 2,
        "legend.frameon": False,
        "lines.linewidth": LINE_WIDTH,
        "lines.markersize": 8,
        "axes.prop_cycle": cycler(color=list(theme.PALETTE)),
        "axes.linewidth": 1.2,
        "axes.edgecolor": theme.MUTED,
        "axes.labelcolor": theme.TEXT,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.color": GRID,
        "grid.linewidth": 1.0,
        "text.color": theme.TEXT,
        "xtick.color": theme.MUTED,
        "ytick.color": theme.MUTED,
        "xtick.major.width": 1.2,
        "ytick.major.width": 1.2,
        "figure.figsize": (WIDTH_IN, HEIGHT_IN),
        "figure.facecolor": theme.BACKGROUND,
        "axes.facecolor": theme.BACKGROUND,
        "savefig.facecolor": theme.BACKGROUND,
        "figure.constrained_layout.use": True,
        "svg.fonttype": "path",  # glyphs as outlines: the same look on every machine, offline
        "svg.hashsalt": "slidegen",  # stable ids: an unchanged figure gives the same SVG bytes
    }


def new_figure(
    nrows: int = 1, ncols: int = 1, width: float = WIDTH_IN, height: float = HEIGHT_IN, **kwargs: Any
) -> tuple[Any, Any]:
    """A Figure with its Axes (an array of them for a grid), without pyplot's global state."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def _installed(families: list[str]) -> list[str]:
    """The installed families of ``families``, in order (missing ones make matplotlib warn)."""
    from matplotlib import font_manager

    names = {font.name for font in font_manager.fontManager.ttflist}
    found = [family for family in families if family in names]
    return found or ["DejaVu Sans"]
