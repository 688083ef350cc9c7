"""The one look shared by the HTML and PowerPoint writers and the figures: colours, fonts, sizes.

Colours are ``#rrggbb``; every text colour passes WCAG AA (4.5:1) on the background it is
used on (``tests/test_theme.py`` checks it). Fonts name what Office has first and an
offline fallback that Debian ships; the HTML theme loads no web fonts.
"""

from __future__ import annotations

# Colours
BACKGROUND = "#ffffff"
TEXT = "#1f2933"  # 14.7:1 on white
MUTED = "#52606d"  # 6.4:1 on white: captions, slide numbers, footers
ACCENT = "#1d4ed8"  # 6.7:1 on white: links, headings' rule, bound numbers
ACCENT_DARK_BG = "#1f2933"  # background of the dark layouts (tone="dark" in slidegen/deck/layouts.py)
TEXT_ON_DARK = "#ffffff"
CODE_BACKGROUND = "#f5f7fa"
CODE_HIGHLIGHT = "#fff3bf"  # the lines of the current highlight step
TABLE_HEADER_BACKGROUND = "#e4e7eb"
TABLE_RULE = "#9aa5b1"

#: Okabe-Ito, safe for the common colour-vision deficiencies; figures cycle through it.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")

# Fonts: (Office name, CSS fallbacks that exist offline)
SANS = "Calibri"
SANS_CSS = "Calibri, Carlito, 'Liberation Sans', 'DejaVu Sans', Arial, sans-serif"
MONO = "DejaVu Sans Mono"
MONO_CSS = "'DejaVu Sans Mono', Consolas, 'Liberation Mono', Menlo, monospace"

#: Pygments style for code on both outputs. Xcode's token colours all pass 4.5:1 on
#: CODE_BACKGROUND and on CODE_HIGHLIGHT (Pygments' "default" does not: 4.47:1 for
#: decorators and ``and``/``or``/``not``, 4.49:1 for labels).
CODE_STYLE = "xcode"

#: Every (text colour, background) pair the writers put on a slide or page, by name;
#: tests/test_theme.py holds each to WCAG AA (4.5:1).
TEXT_PAIRS = (
    ("TEXT", "BACKGROUND"),  # body text
    ("MUTED", "BACKGROUND"),  # captions, footers, slide numbers, index summaries
    ("ACCENT", "BACKGROUND"),  # links, bound numbers, index titles
    ("TEXT_ON_DARK", "ACCENT_DARK_BG"),  # slides of the dark layouts, their footers
    ("TEXT", "CODE_BACKGROUND"),  # code blocks, inline code, the PDF notes band
    ("MUTED", "CODE_BACKGROUND"),  # missing-image placeholders, the PDF notes label, index on hover
    ("ACCENT", "CODE_BACKGROUND"),  # links in the PDF notes band, index titles on hover
    ("TEXT", "CODE_HIGHLIGHT"),  # the lines of the current highlight step
    ("TEXT", "TABLE_HEADER_BACKGROUND"),  # table headers
)

# Slide geometry: 16:9. HTML in CSS pixels, PPTX in inches (13.333 x 7.5).
WIDTH_PX, HEIGHT_PX = 1280, 720
WIDTH_IN, HEIGHT_IN = 13.333, 7.5

# Type sizes in points as shown on the 13.333 x 7.5 in slide (960 x 540 pt at 1280x720: 1 pt is 4/3 px),
# in PPTX and HTML alike. Main text, tables and code never go under MIN_MAIN_PT, and are never shrunk to
# fit (``slidegen check`` warns instead); footers, captions, footnotes and references never under MIN_SMALL_PT.
TITLE_PT = 36
BODY_PT = 22
CODE_PT = 18
TABLE_PT = 19
NOTE_PT = 12
MIN_MAIN_PT = 18
MIN_SMALL_PT = 12
