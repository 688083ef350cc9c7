"""``slidegen serve``: the live preview until Ctrl-C or SIGTERM (its temporary folder removed either way)."""

from __future__ import annotations

import argparse
import signal
from types import FrameType

from slidegen.project import find_project


def cmd_serve(args: argparse.Namespace) -> int:
    from slidegen.serve import DEFAULT_HOST, serve

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM ends the preview as Ctrl-C does: its temporary folder is removed

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        # the default is loopback; any other address must come from an explicit --host
        host, remote = args.host or DEFAULT_HOST, args.host is not None
        if args.open:
            return serve(find_project(), host=host, port=args.port, allow_remote=remote, open_browser=True)
        return serve(find_project(), host=host, port=args.port, allow_remote=remote)
    finally:
        signal.signal(signal.SIGTERM, previous)
