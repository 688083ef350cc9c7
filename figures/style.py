"""The one look of every figure: the deck theme's fonts and colours, sized for a projector.

The renderer draws each figure inside ``matplotlib.rc_context(rc())``, with ``figure.figsize``
set to the box the slide shows it in (:mod:`slidegen.deck.figbox`); figure code starts from
:func:`new_figure`, which draws at that size, so a label set at 18 pt is shown at 18 pt, like
the slide's own text, from the back of a room. Without a box a figure is 9.6 x 5.4 in (16:9).
After the figure function returns, :func:`finish` raises any text set below :data:`MIN_PT`.
Lines cycle through the Okabe-Ito palette of :mod:`slidegen.theme`, safe for colour-blind
viewers, and compared curves differ in line style and marker too, so they part in grey-scale.
Nothing here imports matplotlib until it is called.
"""

from __future__ import annotations

from typing import Any

from slidegen import theme

WIDTH_IN, HEIGHT_IN = 9.6, 5.4
#: The smallest text of a figure (ticks, legends, annotations) and its axis labels, as shown.
MIN_PT = 18
FONT_PT = 20
LINE_WIDTH = 2.5
GRID = "#e4e7eb"
#: The line styles the cycle pairs with the palette's colours.
DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 1)), (0, (8, 2))]
#: Carlito is metric-compatible with Calibri (the decks' font) and ships with Debian.
SANS = ["Carlito", "Calibri", "Liberation Sans", "DejaVu Sans"]


def rc() -> dict[str, Any]:
    """matplotlib rcParams for every figure."""
    from cycler import cycler

    return {
        # the families themselves, not "sans-serif": matplotlib then takes a glyph Carlito lacks (m̂, ∝)
        # from the next family instead of drawing a box
        "font.family": _installed(SANS),
        "font.sans-serif": _installed(SANS),
        "font.size": FONT_PT,
        "axes.titlesize": FONT_PT,
        "axes.titleweight": "bold",
        "axes.titlelocation": "left",
        "axes.labelsize": FONT_PT,
        "xtick.labelsize": MIN_PT,
        "ytick.labelsize": MIN_PT,
        "legend.fontsize": MIN_PT,
        "legend.handlelength": 2.6,
        "legend.frameon": False,
        "lines.linewidth": LINE_WIDTH,
        "lines.markersize": 8,
        # colour, dash and marker change together: compared curves part in grey-scale too
        "axes.prop_cycle": cycler(color=list(theme.PALETTE)) + cycler(linestyle=DASHES),
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
    nrows: int = 1, ncols: int = 1, width: float | None = None, height: float | None = None, **kwargs: Any
) -> tuple[Any, Any]:
    """A Figure with its Axes (an array of them for a grid), without pyplot's global state.

    It fills the box the slide shows it in (``figure.figsize``); a ``width`` and ``height`` asked for
    give its shape (``width`` defaults to 9.6 in), scaled to the largest that fits the box.
    """
    import matplotlib
    from matplotlib.figure import Figure

    box_w, box_h = (float(v) for v in matplotlib.rcParams["figure.figsize"])
    if width is None and height is None:
        size = (box_w, box_h)
    else:
        want_w = WIDTH_IN if width is None else width
        want_h = HEIGHT_IN if height is None else height
        scale = min(box_w / want_w, box_h / want_h)
        size = (want_w * scale, want_h * scale)
    fig = Figure(figsize=size)
    axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def finish(fig: Any) -> Any:
    """Raise every text of ``fig`` set below :data:`MIN_PT` to it (the renderer calls this on each figure)."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if text.get_fontsize() < MIN_PT:
            text.set_fontsize(MIN_PT)
    return fig


def label_line(ax: Any, line: Any, text: str, *, at: float = 1.0, **kwargs: Any) -> Any:
    """Write ``text`` beside the end of ``line`` (a Line2D) in its colour: a curve named where it is drawn."""
    xs, ys = line.get_xdata(), line.get_ydata()
    k = min(len(xs) - 1, max(0, round(at * (len(xs) - 1))))
    options = {
        "color": line.get_color(),
        "va": "center",
        "ha": "left",
        "fontsize": MIN_PT,
        "xytext": (6, 0),
        "textcoords": "offset points",
        **kwargs,
    }
    return ax.annotate(text, (xs[k], ys[k]), **options)


def _installed(families: list[str]) -> list[str]:
    """The installed families of ``families``, in order (missing ones make matplotlib warn)."""
    from matplotlib import font_manager

    names = {font.name for font in font_manager.fontManager.ttflist}
    found = [family for family in families if family in names]
    return found or ["DejaVu Sans"]
