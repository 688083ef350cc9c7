"""``slidegen serve``: live preview. Build to a temporary folder, serve it, rebuild on save, reload.

- The HTML is built into a temporary folder (``build/`` is left alone) and served by
  :mod:`http.server` in a thread, on 127.0.0.1 unless told otherwise: a host that is not a
  loopback address must be asked for explicitly (``--host``; ``allow_remote=True`` here),
  or :class:`Preview` refuses it.
- ``decks/``, ``results/`` and ``figures/`` are polled every :data:`POLL_SECONDS` (mtimes,
  sizes and inodes: stdlib only). A changed deck file rebuilds that deck; anything else
  (results.md, run data, figure code, pictures) rebuilds every deck. The index is rewritten
  each time.
- Served HTML pages get a few lines of script (:data:`LIVE_SCRIPT`, added by the server to
  its responses, never written into the build) that listen on the Server-Sent Events
  endpoint ``/__events``; a ``reload`` event naming the page reloads it, and reveal.js's
  ``hash: true`` brings back the same slide.
- A deck with an error is not fatal: its page becomes an error page (``file:line:col``,
  the message, HTML-escaped) that reloads like the others once the file is fixed.
"""

from __future__ import annotations

import ipaddress
import json
import os
import queue
import shutil
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from markupsafe import Markup

from . import theme
from .atomic import atomic_write
from .errors import Diagnostic, SlidegenError, UsageError, display_path
from .project import Project

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
POLL_SECONDS = 0.3
EVENTS_PATH = "/__events"
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_SECONDS = 15.0

#: Added before ``</body>`` of every HTML page the server sends.
LIVE_SCRIPT = """<script>
/* slidegen serve: reload this page when it is rebuilt (reveal.js keeps the slide in the URL). */
(function () {
  if (window.__slidegenLive || !window.EventSource) return;
  window.__slidegenLive = true;
  var page = decodeURIComponent(location.pathname.split("/").pop()) || "index.html";
  var events = new EventSource("/__events");
  events.addEventListener("reload", function (event) {
    var pages = [];
    try { pages = JSON.parse(event.data).pages || []; } catch (e) {}
    if (!pages.length || pages.indexOf(page) >= 0) location.reload();
  });
})();
</script>
"""

_SKIP_DIRS = {"__pycache__", "node_modules"}


# --------------------------------------------------------------------------- hosts


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) means this machine only."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def check_host(host: str, allow_remote: bool = False) -> str:
    """``host`` when it may be bound: loopback always, anything else only when asked for explicitly."""
    if not host:
        raise UsageError("empty host: leave --host out to serve on 127.0.0.1")
    if not allow_remote and not is_loopback(host):
        raise UsageError(
            f"refusing to serve on {host}: the preview is for this machine (127.0.0.1); "
            f"pass --host {host} explicitly to let other machines see it"
        )
    return host


# --------------------------------------------------------------------------- events


class EventHub:
    """Fans Server-Sent Events out to every open ``/__events`` stream."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: set[queue.Queue] = set()
        self.closed = False

    def subscribe(self) -> queue.Queue:
        stream: queue.Queue = queue.Queue()
        with self._lock:
            if self.closed:
                stream.put(None)
            self._queues.add(stream)
        return stream

    def unsubscribe(self, stream: queue.Queue) -> None:
        with self._lock:
            self._queues.discard(stream)

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._queues)

    def publish(self, event: str, data: object) -> None:
        message = (event, json.dumps(data))
        with self._lock:
            for stream in self._queues:
                stream.put(message)

    def close(self) -> None:
        """End every stream (their handlers return)."""
        with self._lock:
            self.closed = True
            for stream in self._queues:
                stream.put(None)


# --------------------------------------------------------------------------- HTTP


def inject_live_script(page: bytes) -> bytes:
    """``page`` with :data:`LIVE_SCRIPT` before its last ``</body>`` (or at the end)."""
    script = LIVE_SCRIPT.encode("utf-8")
    at = page.lower().rfind(b"</body>")
    if at < 0:
        return page + script
    return page[:at] + script + page[at:]


class _Handler(SimpleHTTPRequestHandler):
    """Static files from the build folder, HTML with the live script, and the event stream."""

    hub: EventHub  # set on the subclass made by Preview

    def do_GET(self) -> None:
        if urlsplit(self.path).path == EVENTS_PATH:
            self._events()
            return
        target = Path(self.translate_path(self.path))
        if target.is_dir() and self.path.split("?", 1)[0].endswith("/"):
            target = target / "index.html"
        if target.suffix == ".html" and target.is_file():
            self._page(target)
            return
        super().do_GET()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a reload must fetch the rebuilt files
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the preview prints rebuilds, not requests

    def _page(self, target: Path) -> None:
        try:
            body = inject_live_script(target.read_bytes())
        except OSError:
            self.send_error(404, "File not found")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _events(self) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.end_headers()
        stream = self.hub.subscribe()
        try:
            self.wfile.write(b"retry: 1000\n: connected\n\n")
            self.wfile.flush()
            while True:
                try:
                    message = stream.get(timeout=KEEPALIVE_SECONDS)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if message is None:
                    return
                event, data = message
                self.wfile.write(f"event: {event}\ndata: {data}\n\n".encode())
                self.wfile.flush()
        except OSError:  # the browser went away
            return
        finally:
            self.hub.unsubscribe(stream)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: Callable) -> None:
        host = address[0].strip("[]")
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, address[1]), handler)

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the browser closed the connection (reloaded, navigated away): nothing wrong
        super().handle_error(request, client_address)


# --------------------------------------------------------------------------- error pages


def error_page(deck: Path, diagnostics: Iterable[Diagnostic | str]) -> str:
    """A page standing in for a deck that does not build: every problem, escaped."""
    lines = Markup("\n").join(Markup("<li><code>{}</code></li>").format(str(d)) for d in diagnostics)
    return str(
        Markup(_ERROR_PAGE).format(
            name=display_path(deck),
            problems=lines,
            bg=theme.BACKGROUND,
            text=theme.TEXT,
            muted=theme.MUTED,
            accent=theme.ACCENT,
            code_bg=theme.CODE_BACKGROUND,
            sans=Markup(theme.SANS_CSS),
            mono=Markup(theme.MONO_CSS),
        )
    )


_ERROR_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Error in {name}</title>
<link rel="icon" href="data:,">
<style>
body {{ margin: 0; background: {bg}; color: {text}; font-family: {sans}; font-size: 20px; line-height: 1.45; }}
main {{ max-width: 60rem; margin: 0 auto; padding: 3rem 1.5rem; }}
h1 {{ font-size: 1.8rem; margin: 0 0 1rem; border-left: 8px solid #b42318; padding-left: 0.6em; }}
ul {{ list-style: none; padding: 0; }}
li {{ margin: 0 0 0.8em; }}
code {{ display: block; white-space: pre-wrap; font-family: {mono}; font-size: 0.85em;
        background: {code_bg}; padding: 0.8em 1em; border-radius: 6px; }}
p {{ color: {muted}; }}
a {{ color: {accent}; }}
</style>
</head>
<body>
<main>
<h1>{name} does not build</h1>
<ul class="problems">
{problems}
</ul>
<p>Fix the file and save it: this page reloads by itself. <a href="index.html">All decks</a></p>
</main>
</body>
</html>
"""


# --------------------------------------------------------------------------- watching


def snapshot(roots: Iterable[Path]) -> dict[Path, tuple[int, int, int]]:
    """(mtime in ns, size, inode) of every file under ``roots``; hidden and editor temp files left out."""
    seen: dict[Path, tuple[int, int, int]] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS]
            for name in files:
                if name.startswith((".", "#")) or name.endswith(("~", ".swp", ".tmp")):
                    continue
                path = Path(folder) / name
                try:
                    info = path.stat()
                except OSError:  # removed while we looked
                    continue
                seen[path] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return seen


def changed_files(before: dict[Path, tuple], after: dict[Path, tuple]) -> set[Path]:
    """Files added, removed or modified between two snapshots."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


# --------------------------------------------------------------------------- the preview


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
    ) -> None:
        self.project = project
        self.host = check_host(host, allow_remote)
        self.requested_port = port
        self.interval = interval
        self.log = log if log is not None else sys.stderr
        self.hub = EventHub()
        self.errors: dict[Path, list[str]] = {}
        self.builds = 0
        self._tmp: Path | None = None
        self._server: _Server | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._seen: dict[Path, tuple[int, int, int]] = {}

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
        return self._server.server_address[1] if self._server else self.requested_port

    @property
    def address(self) -> tuple[str, int]:
        """The address the server is bound to."""
        if self._server is None:
            raise RuntimeError("the preview is not started")
        return self._server.server_address[:2]

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host.strip('[]')}]"
        if host in ("0.0.0.0", "[::]"):
            host = "127.0.0.1" if host == "0.0.0.0" else "[::1]"
        return f"http://{host}:{self.port}/"

    def start(self) -> Preview:
        """Build every deck into a temporary folder and start serving it."""
        self._tmp = Path(tempfile.mkdtemp(prefix="slidegen-serve-"))
        try:
            self._seen = snapshot(self.watched())
            self.rebuild(None)
            handler = type("Handler", (_Handler,), {"hub": self.hub})
            try:
                self._server = _Server((self.host, self.requested_port), partial(handler, directory=str(self.html_dir)))
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
        """Poll for changes in a thread (the CLI polls in the main thread with :meth:`watch`)."""
        thread = threading.Thread(target=self.watch, name="slidegen-watch", daemon=True)
        thread.start()
        self._threads.append(thread)

    def watch(self) -> None:
        """Poll every :attr:`interval` seconds until :meth:`close`; Ctrl-C ends it too."""
        while not self._stop.wait(self.interval):
            self.poll()

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
        root = self.project.root
        return [self.project.decks_dir, root / "results", root / "figures"]

    def decks_touched(self, changed: Iterable[Path]) -> list[Path] | None:
        """The decks a change touches: a deck file itself, or ``None`` for every deck."""
        decks: list[Path] = []
        decks_dir = self.project.decks_dir.resolve()
        for path in changed:
            if path.suffix == ".md" and path.parent.resolve() == decks_dir:
                decks.append(path)
            else:
                return None  # results, run data, figure code, pictures: any deck may show them
        return sorted(set(decks))

    def poll(self) -> list[str]:
        """Look for changes once; rebuild what they touch. Returns the pages rebuilt."""
        with self._lock:
            now = snapshot(self.watched())
            changed = changed_files(self._seen, now)
            self._seen = now
        if not changed:
            return []
        return self.rebuild(self.decks_touched(changed))

    def rebuild(self, decks: list[Path] | None) -> list[str]:
        """Rebuild ``decks`` (``None``: all) and the index, then tell the open pages.

        Returns the names of the pages rebuilt (``01-x.html``, ``index.html``).
        """
        from . import html
        from .build import build, project_index

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
            try:
                if present:
                    report = build(self.project, present, ("html",), self.out)
                    written = {p.resolve() for p in report.written}
                    for path in present:
                        page = (self.html_dir / f"{path.stem}.html").resolve()
                        if page not in written:
                            failures[path] = _problems_of(path, report.diagnostics)
                    for diagnostic in report.diagnostics:
                        if diagnostic.severity != "error":
                            print(diagnostic, file=self.log)
                else:
                    html.copy_assets(self.html_dir)
                    html.write_index(project_index(self.project).decks, self.html_dir)
            except SlidegenError as error:  # results.md itself, for instance: every deck shows it
                failures = {path: [str(error.diagnostic)] for path in present}
            except Exception as error:  # a bug must not stop the preview: show it on the page
                traceback.print_exc(file=self.log)
                failures = {path: [f"internal error while building: {type(error).__name__}: {error}"]
                            for path in present}
            for path in present:
                pages.append(f"{path.stem}.html")
                if path in failures:
                    self.errors[path.resolve()] = failures[path]
                    atomic_write(self.html_dir / f"{path.stem}.html", error_page(path, failures[path]))
                    for line in failures[path]:
                        print(line, file=self.log)
                else:
                    self.errors.pop(path.resolve(), None)
            pages.append("index.html")
            self.builds += 1
            elapsed = time.perf_counter() - start
        if present:
            names = ", ".join(p.stem for p in present) if len(present) <= 3 else f"{len(present)} decks"
            note = f" ({len(failures)} with errors)" if failures else ""
            print(f"built {names} in {elapsed:.2f} s{note}", file=self.log)
        self.hub.publish("reload", {"pages": pages})
        return pages


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
) -> int:
    """Serve ``project`` until Ctrl-C; the exit code (0)."""
    log = log if log is not None else sys.stderr
    preview = Preview(project, host=host, port=port, allow_remote=allow_remote, log=log)
    try:
        preview.start()
        if not is_loopback(preview.host):
            print(f"warning: serving on {preview.host}: other machines can see these decks", file=log)
        print(f"serving {preview.url} (from {preview.html_dir}); watching decks/, results/, figures/; "
              "Ctrl-C stops", file=log)
        preview.watch()
    except KeyboardInterrupt:
        print("stopped", file=log)
    finally:
        preview.close()
    return 0
