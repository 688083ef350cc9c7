"""``slidegen results diff REV``: the results that changed since a git revision, and the slides citing each."""

from __future__ import annotations

import argparse

from slidegen.project import find_project


def cmd_results(args: argparse.Namespace) -> int:
    from slidegen.run.results_diff import printed_changed, results_diff

    changes = results_diff(find_project().root, args.rev)
    shown = [change for change in changes if args.verbose or printed_changed(change)]
    for change in shown:
        print(change)
    rest = len(changes) - len(shown)
    if rest:
        print(f"{rest} more value(s) changed below the precision slides show (`-v` lists them)")
    if not changes:
        print(f"no result changed since {args.rev}")
    return 0
