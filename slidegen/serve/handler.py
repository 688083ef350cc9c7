"""The preview's HTTP side: static files from the build folder, HTML pages with the live script, and
the event stream at :data:`EVENTS_PATH`.

The live script is added by the server to the pages it sends, never written into the build:
a normal ``slidegen build`` carries none.
"""

from __future__ import annotations

import html
import ipaddress
import os
import queue
import socket
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from slidegen.serve.events import EventHub, Message

EVENTS_PATH = "/__events"
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_SECONDS = 15.0

#: The script added before ``</body>`` of every HTML page the server sends (``templates/live.js``): it
#: listens on :data:`EVENTS_PATH`, patches slides in place on a ``patch`` event and reloads on ``reload``.
LIVE_SCRIPT = (
    "<script>\n"
    + (Path(__file__).resolve().parents[1] / "templates" / "live.js").read_text(encoding="utf-8")
    + "</script>\n"
)


#: The banner a page's warnings stand in while it is previewed (stale results it cites): fixed at the top.
BANNER_STYLE = (
    "position:fixed;top:0;left:0;right:0;z-index:1000;margin:0;padding:8px 16px;max-height:30vh;overflow:auto;"
    "background:#fff4e5;color:#5c3b00;border-bottom:3px solid #b54708;font:15px/1.4 system-ui,sans-serif;"
    "white-space:pre-wrap"
)


def banner(lines: Sequence[str]) -> str:
    """The warning banner for ``lines`` (HTML-escaped), or nothing when there are none."""
    if not lines:
        return ""
    body = "\n".join(html.escape(line) for line in lines)
    return f'<div id="slidegen-banner" role="alert" style="{BANNER_STYLE}">{body}</div>\n'


def inject_live_script(page: bytes, warnings: Sequence[str] = ()) -> bytes:
    """``page`` with the :func:`banner` of ``warnings`` and :data:`LIVE_SCRIPT` before its last ``</body>``
    (or at the end)."""
    script = (banner(warnings) + LIVE_SCRIPT).encode("utf-8")
    at = page.lower().rfind(b"</body>")
    if at < 0:
        return page + script
    return page[:at] + script + page[at:]


#: :meth:`Handler._target` for the event stream.
EVENTS = Path(EVENTS_PATH)


def request_path(raw: str) -> str | None:
    """The decoded path of a request target (query and fragment dropped), or None when it is
    malformed: not absolute, a NUL or other control character, a backslash, or a ``..``
    or ``.`` segment (after decoding once: ``%2e%2e`` is ``..``; ``%252e`` stays a name)."""
    path = raw.split("#", 1)[0].split("?", 1)[0]
    if not path.startswith("/") or path.startswith("//"):
        return None
    try:
        decoded = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return None
    if any(ord(ch) < 32 or ch in "\\\x7f" for ch in decoded):
        return None
    if any(part in (".", "..") for part in decoded.split("/")):
        return None
    return decoded


def host_allowed(header: str | None, bound: str) -> bool:
    """Whether a ``Host`` header names this preview: an IP address (no DNS name can be rebound to
    it), ``localhost`` or the name the server was started with; any port."""
    if not header:
        return False
    name = header.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else ""
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    if not name:
        return False
    if name in ("localhost", bound.strip("[]").lower()):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Handler(SimpleHTTPRequestHandler):
    """One request: a file of the build folder, an HTML page with the live script, or the event stream."""

    def __init__(
        self,
        *args: Any,
        hub: EventHub,
        host: str = "127.0.0.1",
        warnings: Mapping[str, Sequence[str]] | None = None,
        **kwargs: Any,
    ) -> None:
        self.hub = hub  # before the base class handles the request
        self.host = host
        self.warnings = warnings if warnings is not None else {}
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        target = self._target()
        if target is None:
            return
        if target == EVENTS:
            self._events()
        elif target.suffix == ".html":
            self._page(target)
        else:
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._target() is not None:
            super().do_HEAD()

    def _target(self) -> Path | None:
        """The file a GET or HEAD asks for, or None once an error is sent: a foreign ``Host`` (DNS
        rebinding) 421, a malformed path 400, a folder without ``index.html`` or a file outside the
        build folder 404."""
        if not host_allowed(self.headers.get("Host"), self.host):
            self.send_error(421, "Misdirected Request", "this preview answers only to its own address")
            return None
        path = request_path(self.path)
        if path is None:
            self.send_error(400, "Bad Request", "malformed path")
            return None
        if path == EVENTS_PATH:
            return EVENTS
        root = Path(self.directory).resolve()
        target = root.joinpath(*[part for part in path.split("/") if part])
        if path.endswith("/") or target == root:
            target = target / "index.html"
        try:
            target = target.resolve()
            found = target.is_relative_to(root) and target.is_file()
        except (OSError, ValueError, RuntimeError):
            found = False
        if not found:
            self.send_error(404, "File not found")
            return None
        return target

    def translate_path(self, path: str) -> str:
        """The file :meth:`_target` chose (the base class serves it); a path that gets here unchecked is none."""
        checked = request_path(path)
        return str(Path(self.directory).joinpath(*checked.split("/"))) if checked is not None else "/nonexistent"

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """As the base class, but what the client got wrong is a 4xx: a method the preview does not
        serve is 405 (not 501), an HTTP version it does not speak 400 (not 505)."""
        if code == 501:
            code, message = 405, "Method Not Allowed"
        elif code == 505:
            code, message = 400, "Bad Request"
        super().send_error(code, message, explain)

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """Folders are never listed."""
        self.send_error(404, "File not found")
        return None

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a reload must fetch the rebuilt files
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the preview prints rebuilds, not requests

    def _page(self, target: Path) -> None:
        try:
            body = inject_live_script(target.read_bytes(), self.warnings.get(target.name, ()))
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
                    message: Message = stream.get(timeout=KEEPALIVE_SECONDS)
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


class Server(ThreadingHTTPServer):
    """A threaded HTTP server on IPv4 or IPv6 that takes a closed connection quietly."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        hub: EventHub,
        directory: Path,
        warnings: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """``warnings``: page name -> the lines of its banner (read at each request)."""
        host = address[0].strip("[]")
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__(
            (host, address[1]), partial(Handler, hub=hub, host=host, directory=str(directory), warnings=warnings)
        )

    @property
    def bound(self) -> tuple[str, int]:
        """The host and port the server listens on (the port the OS picked for port 0)."""
        host, port = self.server_address[:2]
        return (host.decode() if isinstance(host, bytes | bytearray) else str(host)), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the browser closed the connection (reloaded, navigated away): nothing wrong
        super().handle_error(request, client_address)
