"""Server-Sent Events fanned out to every open page: the rebuilds tell the browsers to patch slides or reload."""

from __future__ import annotations

import json
import queue
import threading

#: What a stream carries: ``(event name, JSON data)``, or ``None`` when the hub closes.
Message = tuple[str, str] | None


class EventHub:
    """Fans Server-Sent Events out to every open ``/__events`` stream."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: set[queue.Queue[Message]] = set()
        self.closed = False

    def subscribe(self) -> queue.Queue[Message]:
        """A new stream: every event published from now on, then ``None`` once the hub closes."""
        stream: queue.Queue[Message] = queue.Queue()
        with self._lock:
            if self.closed:
                stream.put(None)
            self._queues.add(stream)
        return stream

    def unsubscribe(self, stream: queue.Queue[Message]) -> None:
        with self._lock:
            self._queues.discard(stream)

    @property
    def listeners(self) -> int:
        """How many streams are open."""
        with self._lock:
            return len(self._queues)

    def publish(self, event: str, data: object) -> None:
        """Send ``event`` with ``data`` (as JSON) to every open stream."""
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
