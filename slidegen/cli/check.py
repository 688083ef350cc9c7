"""``slidegen check``: every problem of the project printed, errors on stderr; exit 1 when there is an error."""

from __future__ import annotations

import argparse
import sys

from slidegen.project import find_project


def cmd_check(args: argparse.Namespace) -> int:
    from slidegen.check.project import check_project
    from slidegen.media.figures import FigureRenderer, figure_names
    from slidegen.record.discover import environment
    from slidegen.record.stale import current_fingerprints

    project = find_project()
    names = figure_names(project)
    diagnostics = check_project(
        project.root,
        strict=args.strict,
        fingerprints=current_fingerprints(project) or {},
        figure_names=names,
        environment=environment(),
        strict_env=args.strict_env,
        verbose=args.verbose,
    )
    diagnostics += FigureRenderer(project).problems(names)
    for diagnostic in diagnostics:
        if diagnostic.severity == "error":
            print(diagnostic, file=sys.stderr)
        elif not args.quiet:
            print(diagnostic)
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    if not args.quiet:
        checked = len(project.deck_paths()) + len(project.unusable_decks())
        print(f"{checked} deck(s) checked: {errors} error(s), {warnings} warning(s)")
    return 1 if errors else 0
