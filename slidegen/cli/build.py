"""``slidegen build``: check the options, say up to date from the manifest alone, else build with a progress bar."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from slidegen.errors import EXIT_INTERNAL, Diagnostic, UsageError, display_path
from slidegen.project import find_project


def cmd_build(args: argparse.Namespace) -> int:
    from slidegen.cli.decknames import resolve_decks
    from slidegen.formats import DEFAULT_FORMATS

    project = find_project()
    formats = args.to or DEFAULT_FORMATS
    _check_options(args, formats)
    paths = resolve_decks(project, args.decks) if args.decks else None
    start = time.perf_counter()
    if not args.force and not (paths is None and project.unusable_decks()):
        # nothing changed: said from the manifest and file bytes, without loading the writers (a deck file
        # that cannot be read goes through the build, which reports it)
        from slidegen.pipeline.incremental import up_to_date

        warnings = up_to_date(
            project,
            paths or project.deck_paths(),
            formats,
            args.out or project.build_dir,
            notes=args.notes,
            scale=args.scale,
            with_clicks=args.with_clicks,
            animate=args.clicks == "animate",
            single_file=args.single_file,
        )
        if warnings is not None:
            warnings = _strict_stale(warnings, args.strict)
            failed = any(w.severity == "error" for w in warnings)
            for warning in warnings:
                if not args.quiet or warning.severity == "error":
                    print(warning, file=sys.stderr)
            if not args.quiet:
                print(f"up to date ({time.perf_counter() - start:.2f} s)", file=sys.stderr)
            return 1 if failed else 0
    from slidegen.pipeline.build import BuildOptions, build

    count = len(paths) if paths is not None else len(project.deck_paths())
    slow = any(flavor in formats for flavor in ("pdf", "png"))  # printed through Chromium: seconds per deck
    options = BuildOptions(
        formats=tuple(formats),
        out=args.out,
        notes=args.notes,
        scale=args.scale,
        single_file=args.single_file,
        with_clicks=args.with_clicks,
        animate=args.clicks == "animate",
        force=args.force,
        jobs=args.jobs,
    )
    with _progress(args, count * len(formats), many=count > 1 or slow) as tick:
        report = build(project, paths, options, progress=tick)
    report.diagnostics = _strict_stale(report.diagnostics, args.strict)
    for diagnostic in report.diagnostics:
        if not (args.quiet and diagnostic.severity != "error"):
            print(diagnostic, file=sys.stderr)
    for message in report.internal:
        print(message, file=sys.stderr)
    outputs = [
        p for p in report.written if p.suffix in (".html", ".pptx", ".pdf", ".png", ".md") and p.name != "index.html"
    ]
    if args.verbose:
        for path in report.written:
            print(f"wrote {display_path(path)}", file=sys.stderr)
    if not args.quiet and not report.written and not report.failed:
        print(f"up to date ({time.perf_counter() - start:.2f} s)", file=sys.stderr)
    elif not args.quiet:
        print(
            f"built {len(outputs)} file(s) in {time.perf_counter() - start:.2f} s"
            + (f" into {display_path(args.out or project.build_dir)}/" if outputs else ""),
            file=sys.stderr,
        )
    return EXIT_INTERNAL if report.internal else 1 if report.failed else 0


def _check_options(args: argparse.Namespace, formats: Sequence[str]) -> None:
    """Options that ask for a format the build does not write are usage errors."""
    if args.notes and "pdf" not in formats:
        raise UsageError("--notes writes the PDF with speaker notes: add pdf to --to (e.g. --to html,pdf)")
    if args.single_file and "html" not in formats:
        raise UsageError("--single-file makes each deck's HTML one file: add html to --to (e.g. --to html,pdf)")
    if args.with_clicks and not {"pdf", "png"} & set(formats):
        raise UsageError("--with-clicks prints each click of a slide to PDF or PNG: add pdf or png to --to")


def _strict_stale(diagnostics: Sequence[Diagnostic], strict: bool) -> list[Diagnostic]:
    """``diagnostics``, with each stale-result warning an error under ``--strict``."""
    from slidegen.record.stale import is_stale_warning

    return [replace(d, severity="error") if strict and is_stale_warning(d) else d for d in diagnostics]


class _progress:
    """A bar per deck and output on a terminal (plain lines elsewhere), when a build does several things."""

    def __init__(self, args: argparse.Namespace, total: int, many: bool) -> None:
        self.on = many and not args.quiet
        self.total = total
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Callable[[str, str], None] | None:
        if not self.on:
            return None
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self.task = self.bar.add_task("building", total=self.total)
            self.bar.start()
        return self.tick

    def tick(self, deck: str, output: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{deck} [dim]{output}[/dim]")
        else:
            print(f"{deck}: {output}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
