"""Static pictures of components and Mermaid diagrams, drawn in headless Chromium, cached by content.

PowerPoint cannot run scripts, so each component instance and each Mermaid diagram becomes a
PNG. One path draws both: a page holding the theme's CSS, the component's script and stylesheet
(or ``mermaid.min.js``) and the element, laid out at the width of a slide's body; once the
element has drawn, its box is screenshot at twice the slide's scale. A picture is kept under
``build/cache/pictures/HASH.png``, HASH covering the code (the component's script and CSS, or
Mermaid's version), the element's attributes or the diagram's text, the theme and this module's
format: an unchanged build launches no browser at all. A build that needs pictures launches one
Chromium for all of them (:class:`Pictures`).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen import theme
from slidegen.atomic import atomic_write
from slidegen.deck.nodes import Deck
from slidegen.errors import Diagnostic, SlidegenError, display_path
from slidegen.media import components as comp
from slidegen.media import mermaid
from slidegen.media.assets import theme_css
from slidegen.media.components import Component
from slidegen.write.pdf import CHROMIUM_ARGS, ChromiumMissing, check_available
from slidegen.write.picture_jobs import BODY_WIDTH_PX, SCALE, TIMEOUT_MS, Job, component_job, diagram_job

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

#: How many times this process launched Chromium for pictures (tests check the cache avoids it).
launches = 0

INSTALL_HINT = (
    "install Debian's chromium and the Python package playwright (see the README), "
    'or give the component a fallback="fig:NAME" figure'
)


def _new_page(chromium: Browser) -> Page:
    return chromium.new_page(viewport={"width": theme.WIDTH_PX, "height": theme.HEIGHT_PX}, device_scale_factor=SCALE)


class Pictures:
    """Draws pictures into ``cache_dir``; Chromium is launched once, on the first picture not in the cache."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = Path(cache_dir)

    def cached(self, job: Job) -> Path:
        return self.cache_dir / f"{job.digest}.png"

    def missing(self, jobs: Sequence[Job]) -> list[Job]:
        """The jobs whose picture is not in the cache yet (each once)."""
        out: dict[str, Job] = {}
        for job in jobs:
            if not self.cached(job).is_file():
                out.setdefault(job.digest, job)
        return list(out.values())

    def draw(self, jobs: Sequence[Job]) -> tuple[dict[str, Path], list[Diagnostic]]:
        """Every job's picture (drawn when not cached) by media key, and the jobs that failed, as errors.

        Raises :class:`~slidegen.write.pdf.ChromiumMissing` when a picture must be drawn and there is no browser.
        """
        todo = sorted(self.missing(jobs), key=lambda job: job.kind)  # diagrams share one page
        problems: list[Diagnostic] = []
        if todo:
            with browser() as chromium:  # no Chromium or no Playwright: ChromiumMissing, said in one line
                from playwright.sync_api import Error as PlaywrightError

                page = _new_page(chromium)
                try:
                    for job in todo:
                        try:
                            atomic_write(self.cached(job), self._shot(page, job))
                        except (PictureError, PlaywrightError) as error:
                            message = (
                                str(error)
                                if isinstance(error, PictureError)
                                else (f"{job.what} could not be drawn: {str(error).strip().splitlines()[0]}")
                            )
                            problems.append(Diagnostic(job.path, job.line, 1, message))
                            page.close()  # a page that hung or failed is not reused
                            page = _new_page(chromium)
                finally:
                    page.close()
        return {job.key: self.cached(job) for job in jobs if self.cached(job).is_file()}, problems

    def _shot(self, page: Page, job: Job) -> bytes:
        errors: list[str] = []

        def record(error: object) -> None:
            errors.append(str(error))

        page.on("pageerror", record)
        try:
            return self._draw_one(page, job, errors)
        finally:
            page.remove_listener("pageerror", record)

    def _draw_one(self, page: Page, job: Job, errors: list[str]) -> bytes:
        page.set_default_timeout(TIMEOUT_MS)
        with tempfile.TemporaryDirectory(prefix="slidegen-picture-") as tmp:
            if job.kind == "mermaid":
                if page.evaluate("window.__slidegenMermaid === true") is not True:  # Mermaid loaded once per page
                    html = Path(tmp) / "diagrams.html"
                    html.write_text(_page(job), encoding="utf-8")
                    page.goto(html.as_uri(), wait_until="load")
                failure = page.evaluate(_DRAW_DIAGRAM, job.body)
                if failure:
                    raise PictureError(f"Mermaid cannot draw this diagram: {mermaid.first_line(failure)}")
                target = page.locator("#stage svg").first
            elif job.kind == "html":  # the page is the job's own: no script, everything inlined
                html = Path(tmp) / "block.html"
                html.write_text(job.body, encoding="utf-8")
                page.goto(html.as_uri(), wait_until="load")
                page.evaluate(_FIT_STAGE)
                target = page.locator("#stage")
            else:
                html = Path(tmp) / "picture.html"
                html.write_text(_page(job), encoding="utf-8")
                page.goto(html.as_uri(), wait_until="load")
                page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                defined = page.evaluate(f"customElements.get({json.dumps(job.tag)}) !== undefined")
                if not defined:
                    raise PictureError(
                        f"<{job.tag}> is not defined after loading {job.component.script.name}"
                        if job.component
                        else f"<{job.tag}> is not defined"
                    )
                target = page.locator(f"#stage > {job.tag}").first
            page.evaluate("document.fonts.ready.then(() => true)")
            if errors:
                raise PictureError(f"{job.what} threw while drawing its picture: {errors[0]}")
            box = target.bounding_box()
            if not box or box["width"] < 1 or box["height"] < 1:
                target = page.locator("#stage")
            data: bytes = target.screenshot(type="png", animations="disabled")
            return data


_DRAW_DIAGRAM = """text => mermaid.render('slidegen-picture', text).then(
    r => { document.getElementById('stage').innerHTML = r.svg; return ''; },
    e => { const stray = document.getElementById('dslidegen-picture'); if (stray) stray.remove();
           return String((e && e.message) || e); })"""


# An HTML block laid out at a slide body's width, then its box narrowed to what it draws (an <iframe> of
# 640 px is a 640 px picture), so PowerPoint centres what the slide shows, not a strip of background.
_FIT_STAGE = """() => {
    const stage = document.getElementById('stage');
    const left = stage.getBoundingClientRect().left + parseFloat(getComputedStyle(stage).paddingLeft);
    let right = left;
    for (const el of stage.querySelectorAll('*')) {
        const box = el.getBoundingClientRect();
        if (box.width > 0 && box.height > 0) right = Math.max(right, box.right);
    }
    if (right > left) stage.style.width = Math.ceil(right - left) + 'px';
}"""


class PictureError(Exception):
    """A component that threw, or a diagram Mermaid cannot draw."""


@contextmanager
def browser() -> Iterator[Browser]:
    """One headless Chromium (the one the PDF writer uses); :class:`ChromiumMissing` when there is none."""
    global launches
    executable = check_available()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(
                executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True
            )
        except Exception as error:  # noqa: BLE001 (a browser that does not start is a set-up problem)
            raise ChromiumMissing(f"could not start {executable}: {error}") from None
        launches += 1
        try:
            yield chromium
        finally:
            chromium.close()


def _page(job: Job) -> str:
    """The page a picture is drawn in: the theme, the code, the element in a slide-wide box."""
    head = [
        f"<style>{theme_css()}\nhtml, body {{ margin: 0; background: var(--bg); }}\n"
        f"#stage {{ width: {BODY_WIDTH_PX}px; padding: 8px; box-sizing: content-box; }}</style>"
    ]
    if job.kind == "mermaid":
        body = '<div class="reveal" id="stage"></div>'
        script = (
            f'<script src="{mermaid.script_path().as_uri()}"></script>\n<script>\n'
            f"mermaid.initialize({mermaid.config_json()});\nwindow.__slidegenMermaid = true;\n</script>"
        )
        return _html(head, body, script)
    assert job.component is not None
    if job.component.css:
        head.append(f'<link rel="stylesheet" href="{job.component.css.as_uri()}">')
    body = f'<div class="reveal" id="stage">{job.body}</div>'
    script = f'<script src="{job.component.script.as_uri()}"></script>'
    if job.run is not None and job.run[1].is_file():
        record = job.run[1].read_text(encoding="utf-8").strip().replace("</", "<\\/")
        script = f"<script>window.SLIDEGEN_RUNS = {{{json.dumps(job.run[0])}: {record}}};</script>\n" + script
    return _html(head, body, script)


def _html(head: Sequence[str], body: str, script: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        + "\n".join(head)
        + f"\n</head><body>\n{body}\n{script}\n</body></html>\n"
    )


# --------------------------------------------------------------------------- Mermaid's parser, for check


def parse_problems(diagrams: Sequence[str], cache_dir: Path) -> dict[str, str]:
    """Each diagram text Mermaid cannot parse, with Mermaid's message; parsed texts are remembered in
    ``cache_dir`` so an unchanged project is checked without a browser."""
    todo = [text for text in dict.fromkeys(diagrams) if not _parsed(cache_dir, text).is_file()]
    out: dict[str, str] = {}
    if not todo:
        return out
    with browser() as chromium:
        page = chromium.new_page()
        try:
            page.set_content("<!doctype html><html><body></body></html>")
            page.add_script_tag(path=str(mermaid.script_path()))
            page.evaluate(f"mermaid.initialize({mermaid.config_json()})")
            for text in todo:
                failure = page.evaluate(
                    "t => mermaid.parse(t).then(() => '', e => String((e && e.message) || e))", text
                )
                if failure:
                    out[text] = failure
                else:
                    atomic_write(_parsed(cache_dir, text), b"ok\n")
        finally:
            page.close()
    return out


def _parsed(cache_dir: Path, text: str) -> Path:
    digest = hashlib.sha256(f"{mermaid.version()}\0{text}".encode()).hexdigest()[:24]
    return Path(cache_dir) / f"{digest}.ok"


# --------------------------------------------------------------------------- every picture of a build


@dataclass(frozen=True)
class DeckPictures:
    """The pictures of one deck, by media key, and the problems met drawing them (errors at their lines)."""

    files: dict[str, Path]
    problems: list[Diagnostic]


def deck_jobs(
    deck: Deck, found: Mapping[str, Component], runs_dir: Path | None = None, root: Path | None = None
) -> list[Job]:
    """The pictures ``deck`` needs: one per component instance of a known tag, one per Mermaid diagram,
    one per HTML block PowerPoint cannot draw (its pictures found inside ``root``, the project)."""
    from slidegen.write import htmlpictures

    where = {s.index: display_path(deck.slide_path(s)) for s in deck.slides}  # an imported slide: its own file
    tags = comp.by_tag(found)
    jobs = [component_job(i, tags[i.tag], where[i.slide], runs_dir) for i in comp.instances(deck) if i.tag in tags]
    jobs += [diagram_job(b.picture_key, b.code, where[n], b.line) for b, n in comp.diagrams(deck)]
    return jobs + htmlpictures.deck_jobs(deck, root)


def build_pictures(
    decks: Sequence[Deck],
    found: Mapping[str, Component],
    cache_dir: Path,
    render_figure: Callable[[str], tuple[Path, Path]] | None = None,
    runs_dir: Path | None = None,
    root: Path | None = None,
) -> dict[Path, DeckPictures]:
    """Every picture of every deck, drawn with one Chromium (none when all are cached), by deck path.

    Without Chromium, an instance with ``fallback="fig:NAME"`` gets that figure (drawn by
    ``render_figure``); an HTML block is left out (the PowerPoint writer warns); any other picture
    not in the cache is an error saying what to install.
    """
    jobs = {deck.path: deck_jobs(deck, found, runs_dir, root) for deck in decks}
    pictures = Pictures(cache_dir)
    drawn: dict[str, Path] = {}
    problems: list[Diagnostic] = []
    every = [job for each in jobs.values() for job in each]
    missing_browser: str | None = None
    try:
        drawn, problems = pictures.draw(every)
    except ChromiumMissing as error:
        missing_browser = str(error)
        drawn = {job.key: pictures.cached(job) for job in every if pictures.cached(job).is_file()}
    out: dict[Path, DeckPictures] = {}
    for deck in decks:
        files = {job.key: drawn[job.key] for job in jobs[deck.path] if job.key in drawn}
        found_problems = [p for p in problems if p.path == display_path(deck.path)]
        if missing_browser is not None:
            fallbacks = {i.key: i.attr("fallback") for i in comp.instances(deck)}
            for job in jobs[deck.path]:
                if job.key in files or job.kind == "html":
                    continue
                fallback = fallbacks.get(job.key)
                if fallback and fallback.startswith("fig:") and render_figure is not None:
                    try:
                        files[job.key] = render_figure(fallback[4:])[1]
                        continue
                    except SlidegenError as error:
                        message = f"fallback {fallback}: {error.diagnostic.message}"
                        found_problems.append(Diagnostic(job.path, job.line, 1, message))
                        continue
                what = f"<{job.tag}>" if job.kind == "component" else "a Mermaid diagram"
                hint = INSTALL_HINT if job.kind == "component" else INSTALL_HINT.split(", or")[0]
                found_problems.append(
                    Diagnostic(
                        job.path,
                        job.line,
                        1,
                        f"{what} needs Chromium to draw its PowerPoint picture ({missing_browser}): {hint}",
                    )
                )
        out[deck.path] = DeckPictures(files, found_problems)
    return out
