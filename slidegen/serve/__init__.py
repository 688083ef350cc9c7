"""``slidegen serve``: live preview. Build to a temporary folder, serve it, rebuild on save, reload.

One job per module:

- :mod:`.address`: the HTML is served on 127.0.0.1 unless told otherwise: a host that is not a
  loopback address must be asked for explicitly (``--host``; ``allow_remote=True`` here), or
  :class:`Preview` refuses it.
- :mod:`.watch`: ``decks/``, ``results/``, ``figures/``, ``components/`` and the bibliography are
  watched through file-system events (watchfiles); where those cannot be had, polled every
  :data:`POLL_SECONDS` (mtimes, sizes and inodes: stdlib only).
- :mod:`.preview`: the HTML is built into a temporary folder (``build/`` is left alone), with the
  incremental build's manifest there: a changed deck file rebuilds that deck's HTML, a file the
  manifest lists among decks' inputs (a part imported with ``src:``, a snippet, a picture) or a
  component those decks; anything else (results.md, figure code) goes through the manifest for
  every deck, which rebuilds the decks whose inputs it changed. Only the saved deck is parsed:
  the other decks' index entries are the manifest's. Pages are told only when something was rebuilt.
- :mod:`.patch`: the preview keeps each page as last written and compares the rebuilt one with it;
  when only some slides' contents changed, their new HTML is sent in a ``patch`` event.
- :mod:`.handler` and :mod:`.events`: served HTML pages get a script (:data:`LIVE_SCRIPT`,
  ``templates/live.js``, added by the server to its responses, never written into the build)
  that listens on the Server-Sent Events endpoint ``/__events``: a ``patch`` event replaces those
  slides in place (slide, click and speaker view kept; KaTeX, Mermaid, code steps and components
  run again on them); a ``reload`` event naming the page reloads it, unless it was just patched,
  and reveal.js's ``hash: true`` brings back the same slide.
- :mod:`.errorpage`: a deck with an error is not fatal: its page becomes an error page
  (``file:line:col``, the message, HTML-escaped; ``templates/error.html.j2``) that reloads like
  the others once the file is fixed.
"""

from __future__ import annotations

from slidegen.serve.address import DEFAULT_HOST, DEFAULT_PORT, check_host, is_loopback
from slidegen.serve.errorpage import error_page
from slidegen.serve.events import EventHub
from slidegen.serve.handler import EVENTS_PATH, KEEPALIVE_SECONDS, LIVE_SCRIPT, inject_live_script
from slidegen.serve.preview import Preview, serve
from slidegen.serve.watch import POLL_SECONDS, changed_files, event_changes, events_available, snapshot

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "EVENTS_PATH",
    "KEEPALIVE_SECONDS",
    "LIVE_SCRIPT",
    "POLL_SECONDS",
    "EventHub",
    "Preview",
    "changed_files",
    "check_host",
    "error_page",
    "event_changes",
    "events_available",
    "inject_live_script",
    "is_loopback",
    "serve",
    "snapshot",
]
