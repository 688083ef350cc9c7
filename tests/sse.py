"""The serve tests' reader of ``/__events``: every server-sent event, read in a thread onto a queue."""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time


class Events:
    """Reads /__events in a thread; each event's ``(name, data)`` lands on :attr:`queue`."""

    def __init__(self, port: int) -> None:
        self.queue: queue.Queue[tuple[str, dict]] = queue.Queue()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.request("GET", "/__events")
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        assert (self.response.getheader("Content-Type") or "").startswith("text/event-stream")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        name = None
        try:
            for raw in self.response.fp:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    name = line[len("event: ") :]
                elif line.startswith("data: ") and name:
                    self.queue.put((name, json.loads(line[len("data: ") :])))
                    name = None
        except (OSError, ValueError):
            pass

    def wait_for(self, page: str, timeout: float = 5.0) -> tuple[dict, float]:
        """The first reload event naming ``page``, and how long it took."""
        start = time.monotonic()
        while True:
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                raise AssertionError(f"no reload of {page} within {timeout} s")
            try:
                name, data = self.queue.get(timeout=left)
            except queue.Empty:
                continue
            if name == "reload" and page in data["pages"]:
                return data, time.monotonic() - start

    def until_reload(self, timeout: float = 8.0) -> list[tuple[str, dict]]:
        """The events up to and including the next ``reload``."""
        got: list[tuple[str, dict]] = []
        deadline = time.monotonic() + timeout
        while not got or got[-1][0] != "reload":
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reload event within {timeout} s (got {got})")
            try:
                got.append(self.queue.get(timeout=left))
            except queue.Empty:
                continue
        return got

    def close(self) -> None:
        self.conn.close()
