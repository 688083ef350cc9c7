"""The output formats ``slidegen build`` knows (a module of its own: the CLI reads it without the writers)."""

from __future__ import annotations

FORMATS = ("html", "pptx", "pdf", "png", "md", "marp")
#: What `slidegen build` writes when --to is not given (PDF needs Chromium; md and marp are for other tools).
DEFAULT_FORMATS = ("html", "pptx")
#: Formats a worker process can write on its own (PDF and PNG share one Chromium in the main process;
#: md and marp need the whole deck index before they are written).
PARALLEL_FORMATS = frozenset({"html", "pptx"})
