"""The preview itself: build into a temporary folder, serve it, rebuild what a save touches, tell the pages.

:class:`Preview` ties the parts of :mod:`slidegen.serve` together; :func:`serve` is the command.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from slidegen.atomic import atomic_write
from slidegen.errors import Diagnostic, SlidegenError, UsageError, display_path
from slidegen.pipeline import manifest
from slidegen.project import Project
from slidegen.serve.address import DEFAULT_HOST, DEFAULT_PORT, browser_url, check_host, is_loopback
from slidegen.serve.errorpage import error_page
from slidegen.serve.events import EventHub
from slidegen.serve.handler import Server
from slidegen.serve.patch import Patch, slide_patch
from slidegen.serve.watch import POLL_SECONDS, Stamp, changed_files, event_changes, events_available, snapshot


@dataclass(frozen=True)
class Stages:
    """Seconds spent by one rebuild: from the save to its notice (``None``: not known), building
    (parse, bind, write), and comparing the pages to cut the patches."""

    seen: float | None
    build: float
    compare: float


class Preview:
    """Builds, serves and watches one project; a context manager (``start`` ... ``close``).

    ``host`` must be a loopback address unless ``allow_remote`` is true (the CLI sets it
    only when ``--host`` is given). ``port=0`` picks a free port (see :attr:`port`).
    """

    def __init__(
        self,
        project: Project,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        allow_remote: bool = False,
        interval: float = POLL_SECONDS,
        log: TextIO | None = None,
        events: bool = True,
    ) -> None:
        self.project = project
        self.host = check_host(host, allow_remote)
        self.requested_port = port
        self.interval = interval
        self.log = log if log is not None else sys.stderr
        self.hub = EventHub()
        self.errors: dict[Path, list[str]] = {}
        self.warnings: dict[str, list[str]] = {}
        """Page name -> the warnings its banner shows (the stale results the deck cites)."""
        self.builds = 0
        self._tmp: Path | None = None
        self._server: Server | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._seen: dict[Path, Stamp] = {}
        self.events = events
        self.watcher = ""
        """How saves are noticed once :meth:`watch` runs: ``"events"`` or ``"polling"``."""
        self.watching = threading.Event()
        """Set once saves are being watched."""
        self._pages: dict[str, str] = {}
        """Each deck page as last written (what the open browsers show), to patch from."""
        self.last: Stages | None = None
        """How long the last rebuild's stages took."""

    # ------------------------------------------------------------------ life cycle

    @property
    def out(self) -> Path:
        if self._tmp is None:
            raise RuntimeError("the preview is not started")
        return self._tmp

    @property
    def html_dir(self) -> Path:
        return self.out / "html"

    @property
    def port(self) -> int:
        return self._server.bound[1] if self._server else self.requested_port

    @property
    def address(self) -> tuple[str, int]:
        """The address the server is bound to."""
        if self._server is None:
            raise RuntimeError("the preview is not started")
        return self._server.bound

    @property
    def url(self) -> str:
        return browser_url(self.host, self.port)

    def start(self) -> Preview:
        """Build every deck into a temporary folder and start serving it."""
        self._tmp = Path(tempfile.mkdtemp(prefix="slidegen-serve-"))
        try:
            self._seen = snapshot(self.watched())
            self.rebuild(None)
            try:
                self._server = Server((self.host, self.requested_port), self.hub, self.html_dir, self.warnings)
            except OSError as error:
                raise UsageError(
                    f"cannot serve on {self.host}:{self.requested_port}: {error.strerror or error}"
                    + (f"; try --port {self.requested_port + 1}" if self.requested_port else "")
                ) from None
            thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="slidegen-http", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        except BaseException:
            self.close()
            raise
        return self

    def watch_in_background(self) -> None:
        """Watch for changes in a thread (the CLI watches in the main thread with :meth:`watch`)."""
        thread = threading.Thread(target=self.watch, name="slidegen-watch", daemon=True)
        thread.start()
        self._threads.append(thread)

    def watch(self) -> None:
        """Rebuild on every save until :meth:`close` (Ctrl-C ends it too): through file-system events,
        or by polling every :attr:`interval` seconds when events are off or cannot be had."""
        if self.events and events_available():
            try:
                self._watch_events()
                return
            except (OSError, RuntimeError) as error:
                print(f"warning: no file-system events ({error}); polling every {self.interval} s", file=self.log)
        self.watcher = "polling"
        self.watching.set()
        while not self._stop.wait(self.interval):
            self.poll()

    def _watch_events(self) -> None:
        self.watcher = "events"
        again = False
        while not self._stop.is_set():
            for changed in event_changes(self.watched(), self._stop):
                if not self.watching.is_set():
                    self.watching.set()
                    self.poll()  # what was saved since the first build, this batch included
                elif again:
                    # a watched folder appeared and the new watch is live (its first batch): whatever was
                    # saved meanwhile, in that folder or elsewhere, goes through the manifest
                    again = False
                    self.rebuild(None)
                elif changed:
                    self.changed(changed)
            again = True

    def close(self) -> None:
        """Stop watching and serving, end the event streams, remove the temporary folder."""
        self._stop.set()
        self.hub.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5)
        self._threads.clear()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> Preview:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ building

    def watched(self) -> list[Path]:
        """Decks, results, the bibliography and its styles, the project's components, and the code
        figures are drawn from and snippets import (the packages ``[tool.slidegen]`` names)."""
        root = self.project.root
        code = [root / package for package in self.project.layout.figure_packages]
        return [
            self.project.decks_dir,
            root / "results",
            root / "references.bib",
            root / "styles",
            root / "components",
            *code,
        ]

    def decks_touched(self, changed: Iterable[Path]) -> list[Path] | None:
        """The decks a change touches, or ``None`` for every deck (the build's manifest then decides).

        A deck file is itself; another Markdown file (a part a deck imports with ``src:``) touches
        the decks whose manifest records list it among their inputs; a component's script or style
        the decks using its tag. Anything else (results.md, a run record, figure code, a snippet, a
        picture, a file no deck has used yet) goes through the manifest for every deck: what it
        changes may reach decks that never named it (a figure drawn by code a snippet shows).
        """
        decks: dict[Path, Path] = {}  # each deck once, by its resolved path
        decks_dir = self.project.decks_dir.resolve()
        records = manifest.load(self.out).decks if self._tmp is not None else {}
        components = (self.project.root / "components").resolve()
        results = self.project.results_path.resolve()
        for path in changed:
            place = path.resolve()
            if path.suffix == ".md" and place.parent == decks_dir:
                decks.setdefault(place, path)
                continue
            users: list[str] = []
            if path.suffix == ".md" and place != results:
                users = [key for key, record in records.items() if str(place) in record.deps.files]
            elif place.parent == components and path.suffix in (".js", ".css"):
                users = [
                    key
                    for key, record in records.items()
                    if path.stem in record.deps.components or str(place) in record.deps.files
                ]
            if not users:
                return None
            for key in users:
                decks.setdefault(Path(key), Path(key))
        return sorted(decks.values())

    def poll(self) -> list[str]:
        """Look for changes once; rebuild what they touch. Returns the pages rebuilt."""
        with self._lock:
            now = snapshot(self.watched())
            changed = changed_files(self._seen, now)
            self._seen = now
        if not changed:
            return []
        return self.changed(changed)

    def changed(self, files: set[Path]) -> list[str]:
        """Rebuild what a change to ``files`` (reported by events) touches. Returns the pages rebuilt."""
        components = (self.project.root / "components").resolve()
        scripts = any(path.resolve().is_relative_to(components) for path in files)
        return self.rebuild(self.decks_touched(files), _since_saved(files), patch=not scripts)

    def rebuild(  # noqa: C901 (the rebuild and the reload/patch decision share one lock; split when next touched)
        self, decks: list[Path] | None, seen: float | None = None, patch: bool = True
    ) -> list[str]:
        """Rebuild ``decks`` (``None``: all) and the index, then tell the open pages: a ``patch`` event
        for each page of which only some slides changed (:mod:`.patch`), then a ``reload`` event naming
        every page rebuilt and which of them were patched (those do not reload).

        Only the HTML is built, and of it only what changed (the manifest of the temporary
        folder remembers every other deck). ``seen``: seconds from the save to its notice, for the
        log and :attr:`last`. ``patch=False``: every page rebuilt reloads (a component's script or style
        changed: the page's bytes may not). Returns the names of the pages rebuilt (``01-x.html``,
        ``index.html``).
        """
        from slidegen.pipeline.bound import project_index
        from slidegen.pipeline.build import BuildOptions, build
        from slidegen.write import html

        with self._lock:
            start = time.perf_counter()
            targets = self.project.deck_paths() if decks is None else decks
            present = [p for p in targets if p.is_file()]
            pages = []
            for gone in (p for p in targets if not p.is_file()):  # deleted: its page goes too
                (self.html_dir / f"{gone.stem}.html").unlink(missing_ok=True)
                self.errors.pop(gone.resolve(), None)
                pages.append(f"{gone.stem}.html")
            failures: dict[Path, list[str]] = {}
            bannered: set[str] = set()  # pages whose banner changed: reloaded, not patched
            try:
                if present:
                    # figures are drawn into the temporary folder too: serve leaves build/ alone
                    options = BuildOptions(formats=("html",), out=self.out, figures_dir=self.out / "figures")
                    report = build(self.project, present, options)
                    for path in present:
                        shown = _stale_of(path, report.diagnostics)
                        if self.warnings.get(f"{path.stem}.html", []) != shown:
                            self.warnings[f"{path.stem}.html"] = shown
                            bannered.add(f"{path.stem}.html")
                    written = {p.resolve() for p in report.written}
                    fresh = {p.resolve() for p in report.skipped}
                    present = [p for p in present if p.resolve() not in fresh]  # up to date: nothing to reload
                    for path in present:
                        page = (self.html_dir / f"{path.stem}.html").resolve()
                        if page not in written:
                            named = [
                                d
                                for d in report.diagnostics
                                if d.severity == "error" and Path(d.path).resolve() == path.resolve()
                            ]
                            failures[path] = (
                                [str(d) for d in named] or report.internal or _problems_of(path, report.diagnostics)
                            )
                    for message in report.internal:
                        print(message, file=self.log)
                    for diagnostic in report.diagnostics:
                        if diagnostic.severity != "error":
                            print(diagnostic, file=self.log)
                else:
                    html.copy_assets(self.html_dir)
                    html.write_index(project_index(self.project).decks, self.html_dir, self.project.layout.title)
            except SlidegenError as error:  # results.md itself, for instance: every deck shows it
                failures = {path: [str(error.diagnostic)] for path in present}
            except Exception as error:  # a bug must not stop the preview: show it on the page
                traceback.print_exc(file=self.log)
                failures = {
                    path: [f"internal error while building: {type(error).__name__}: {error}"] for path in present
                }
            if failures:
                manifest.forget(self.out, list(failures))  # an error page stands in: built again once fixed
            built = time.perf_counter()
            patches: dict[str, Patch] = {}
            for path in present:
                name = f"{path.stem}.html"
                pages.append(name)
                if path in failures:
                    self.errors[path.resolve()] = failures[path]
                    atomic_write(self.html_dir / name, error_page(path, failures[path]))
                    self._pages.pop(name, None)  # an error page: the fixed deck reloads
                    for line in failures[path]:
                        print(line, file=self.log)
                else:
                    self.errors.pop(path.resolve(), None)
                    slides = self._remember(name)
                    if slides is not None and patch and name not in bannered:
                        patches[name] = slides
            if targets and not pages:
                return []  # nothing changed (a save of the same bytes, a file no deck uses): nothing to reload
            pages.append("index.html")
            self.builds += 1
            done = time.perf_counter()
            self.last = Stages(seen, built - start, done - built)
        if present:
            names = ", ".join(p.stem for p in present) if len(present) <= 3 else f"{len(present)} decks"
            note = f" ({len(failures)} with errors)" if failures else ""
            if patches:
                count = sum(len(p.slides) for p in patches.values())
                note += f"; {count} slide{'s' * (count != 1)} patched in place"
            after = f" ({seen:.3f} s after the save)" if seen is not None else ""
            print(f"built {names} in {done - start:.2f} s{after}{note}", file=self.log)
        for name, slides in patches.items():
            self.hub.publish("patch", {"page": name, "total": slides.total, "slides": slides.slides})
        self.hub.publish("reload", {"pages": pages, "patched": sorted(patches)})
        return pages

    def _remember(self, name: str) -> Patch | None:
        """Keep the page ``name`` as just written; the slides patch that turns the page the browsers have
        into it, or ``None`` when they must reload: they have nothing of it yet, more than slides
        changed, or nothing in it did (what changed is outside the page: a component's script)."""
        try:
            text = (self.html_dir / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            self._pages.pop(name, None)
            return None
        old = self._pages.get(name)
        self._pages[name] = text
        found = slide_patch(old, text) if old is not None else None
        return found if found is not None and found.slides else None


def _since_saved(files: Iterable[Path]) -> float | None:
    """Seconds since the newest of ``files`` was written (``None`` when none is there any more)."""
    stamps = []
    for path in files:
        try:
            stamps.append(path.stat().st_mtime_ns)
        except OSError:
            continue
    return max(0.0, (time.time_ns() - max(stamps)) / 1e9) if stamps else None


def _stale_of(path: Path, diagnostics: list[Diagnostic]) -> list[str]:
    """The stale-result warnings reported for the deck at ``path``, for its page's banner."""
    from slidegen.record.stale import is_stale_warning

    target = path.resolve()
    return [str(d) for d in diagnostics if is_stale_warning(d) and Path(d.path).resolve() == target]


def _problems_of(path: Path, diagnostics: list[Diagnostic]) -> list[str]:
    """The errors reported for ``path`` (all errors when none names it)."""
    target = path.resolve()
    mine = [d for d in diagnostics if d.severity == "error" and Path(d.path).resolve() == target]
    if not mine:
        mine = [d for d in diagnostics if d.severity == "error"]
    return [str(d) for d in mine] or [f"{display_path(path)}: error: the deck was not built"]


def serve(
    project: Project,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allow_remote: bool = False,
    log: TextIO | None = None,
    open_browser: bool = False,
) -> int:
    """Serve ``project`` until Ctrl-C; the exit code (0). ``open_browser`` opens the index page once it serves."""
    log = log if log is not None else sys.stderr
    preview = Preview(project, host=host, port=port, allow_remote=allow_remote, log=log)
    try:
        preview.start()
        if not is_loopback(preview.host):
            print(f"warning: serving on {preview.host}: other machines can see these decks", file=log)
        print(
            f"serving {preview.url} (from {preview.html_dir}); watching decks/, results/, figures/; Ctrl-C stops",
            file=log,
            flush=True,
        )
        if open_browser:
            import webbrowser

            if not webbrowser.open(preview.url):
                print(f"warning: no web browser to open; visit {preview.url}", file=log)
        preview.watch()
    except KeyboardInterrupt:
        print("stopped", file=log)
    finally:
        preview.close()
    return 0
