"""A picture PowerPoint needs drawn by Chromium: one component instance, Mermaid diagram or HTML block.

:mod:`.htmlpictures` makes the jobs of HTML blocks, :mod:`.snapshot` those of components and diagrams, and
draws them all with one browser; a job's digest is its cache key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from slidegen import theme
from slidegen.media import components as comp
from slidegen.media import mermaid
from slidegen.media.assets import theme_css
from slidegen.media.components import Component, Instance

#: Bumped when the page or the screenshot changes, so old pictures are not reused.
FORMAT = 1
#: The width of a slide's body (the slide minus its side padding), in CSS px.
BODY_WIDTH_PX = theme.WIDTH_PX - 2 * 72
SCALE = comp.PICTURE_SCALE
TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class Job:
    """One picture to draw: a component instance or a diagram, and where it is written (for errors)."""

    key: str
    """The media key the PowerPoint writer looks it up by (:func:`slidegen.media.components.picture_key`)."""
    kind: str
    """``component``, ``mermaid`` or ``html`` (an HTML block, :mod:`slidegen.write.htmlpictures`)."""
    body: str
    """The element's HTML, the diagram's text, or the whole page an HTML block is drawn from."""
    path: str
    line: int
    component: Component | None = None
    tag: str = ""
    run: tuple[str, Path] | None = None
    """The run record the element reads (``run="ID"``): its id and ``results/runs/ID.json``."""

    @cached_property
    def digest(self) -> str:
        """The cache key: the code, the element or diagram, the theme, the format."""
        h = hashlib.sha256(f"{FORMAT}\0{self.kind}\0{SCALE}\0{BODY_WIDTH_PX}\0".encode())
        h.update(
            self.component.code() if self.component else mermaid.version().encode() if self.kind == "mermaid" else b""
        )
        h.update(b"\0" + self.body.encode() + b"\0" + theme_css().encode())
        if self.run is not None and self.run[1].is_file():
            h.update(b"\0" + self.run[1].read_bytes())
        return h.hexdigest()[:24]

    @property
    def what(self) -> str:
        """How errors name it: ``<lr-schedule>``, ``the Mermaid diagram`` or ``the HTML block``."""
        if self.kind == "html":
            return "the HTML block"
        return f"<{self.tag}>" if self.kind == "component" else "the Mermaid diagram"


def component_job(instance: Instance, component: Component, path: str, runs_dir: Path | None = None) -> Job:
    """The picture of one instance (with ``print-state`` the element draws that state; with ``run="ID"``
    the page holds that run's record, as the HTML deck does)."""
    run = instance.attr("run")
    record = (run, runs_dir / f"{run}.json") if run and runs_dir is not None else None
    return Job(instance.key, "component", instance.element, path, instance.line, component, instance.tag, record)


def diagram_job(key: str, code: str, path: str, line: int) -> Job:
    return Job(key, "mermaid", code, path, line)
