"""Characters XML 1.0 cannot hold, replaced once where text enters, so every writer shows the same thing.

XML (and so PowerPoint, and HTML parsed as XML) forbids C0 control characters other than
tab, newline and carriage return, the non-characters U+FFFE and U+FFFF, and lone
surrogates. A deck's source gets each replaced by U+FFFD (the replacement character)
before it is parsed; writers that build XML still escape what other inputs (YAML escapes,
results.md) bring in.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids replaced by U+FFFD."""
    return INVALID.sub(REPLACEMENT, text) if INVALID.search(text) else text
