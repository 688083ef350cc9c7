"""The preview's HTTP side: static files from the build folder, HTML pages with the live script, and
the event stream at :data:`EVENTS_PATH`.

The live script is added by the server to the pages it sends, never written into the build:
a normal ``slidegen build`` carries none.
"""

from __future__ import annotations

import queue
import socket
import sys
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from slidegen.serve.events import EventHub, Message

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


def inject_live_script(page: bytes) -> bytes:
    """``page`` with :data:`LIVE_SCRIPT` before its last ``</body>`` (or at the end)."""
    script = LIVE_SCRIPT.encode("utf-8")
    at = page.lower().rfind(b"</body>")
    if at < 0:
        return page + script
    return page[:at] + script + page[at:]


class Handler(SimpleHTTPRequestHandler):
    """One request: a file of the build folder, an HTML page with the live script, or the event stream."""

    def __init__(self, *args: Any, hub: EventHub, **kwargs: Any) -> None:
        self.hub = hub  # before the base class handles the request
        super().__init__(*args, **kwargs)

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

    def __init__(self, address: tuple[str, int], hub: EventHub, directory: Path) -> None:
        host = address[0].strip("[]")
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, address[1]), partial(Handler, hub=hub, directory=str(directory)))

    @property
    def bound(self) -> tuple[str, int]:
        """The host and port the server listens on (the port the OS picked for port 0)."""
        host, port = self.server_address[:2]
        return (host.decode() if isinstance(host, bytes | bytearray) else str(host)), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the browser closed the connection (reloaded, navigated away): nothing wrong
        super().handle_error(request, client_address)

