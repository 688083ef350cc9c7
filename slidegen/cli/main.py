"""The command line: ``slidegen init | build | run | check | serve | inspect | list | results diff``.

Exit codes: 0 fine, 1 problems in the content (each printed as ``file:line:col: error: ...``),
2 usage errors (with the subcommand's usage), 70 a bug in slidegen ("internal error, please
report", with where it happened). ``-q`` keeps only errors, ``-v`` says more; ``NO_COLOR``
(any value) turns colour off in every command.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from slidegen.cli.run import add_run_parser, cmd_run
from slidegen.errors import EXIT_INTERNAL, Diagnostic, SlidegenError, UsageError, display_path, internal_error
from slidegen.project import find_project


def version() -> str:
    """The installed distribution's version (the source tree's when not installed)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("slidegen")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def _formats(value: str) -> list[str]:
    from slidegen.formats import FORMATS

    formats = [f.strip() for f in value.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise argparse.ArgumentTypeError(
            f"unknown format {', '.join(unknown) or value!r}; choose from {', '.join(FORMATS)}"
        )
    return formats


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value!r}: give a number from 0 to 65535")
    return port


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        jobs = -1
    if jobs < 0:
        raise argparse.ArgumentTypeError(f"invalid job count {value!r}: give 0 (one per core) or more")
    return jobs


def _common() -> argparse.ArgumentParser:
    """``-q`` and ``-v``, accepted before or after the subcommand (SUPPRESS: a subcommand does not reset them)."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="print only errors")
    group.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="print more (every result no slide cites, every file written)")
    return common


class _Version(argparse._VersionAction):
    """``--version``, whose version is looked up only when asked for (the look-up imports importlib.metadata
    and scans site-packages: a third of the start-up of every other command)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.version = f"slidegen {version()}"
        super().__call__(parser, namespace, values, option_string)


#: Where ``--help`` of every command points for writing decks.
GUIDE = 'Writing decks: the "Authoring guide" section of slidegen\'s README.'

_LIST_EXAMPLES = (
    ("slidegen list decks", "every deck: file, slides, title"),
    ("slidegen list keys 'ch01.val_*'", "result keys as slides print them, and the slides citing them"),
    ("slidegen list figures", "registered figures and the slides showing them"),
)
_DIFF_EXAMPLES = (
    ("slidegen results diff", "results whose printed values changed since the last commit"),
    ("slidegen results diff main -v", "since the branch main, every changed value"),
)
#: Two or three examples closing each command's ``--help`` (the top-level parser's under "").
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("slidegen init talk && cd talk", "a small working project to start from"),
        ("slidegen serve", "live preview, rebuilt and reloaded on save"),
        ("slidegen build --to html,pptx,pdf", "every deck to HTML, PowerPoint and PDF"),
    ),
    "init": (
        ("slidegen init talk", "a new project in talk/ (created; refused if it holds anything)"),
        ("slidegen init", "a new project in the current folder, when it is empty"),
    ),
    "build": (
        ("slidegen build", "every deck to HTML and PowerPoint, into build/"),
        ("slidegen build 01 --to html,pdf", "deck 01 to HTML and PDF"),
        ("slidegen build --to png --with-clicks", "a picture per click of every slide"),
    ),
    "serve": (
        ("slidegen serve", "preview on http://127.0.0.1:8000, rebuilt and reloaded on save"),
        ("slidegen serve --port 0 --open", "any free port, opened in the web browser"),
    ),
    "check": (
        ("slidegen check", "every problem `build` would stop on, each as file:line:col"),
        ("slidegen check --strict", "also numbers typed by hand (what CI runs)"),
    ),
    "run": (
        ("slidegen run", "every experiment whose code or settings changed"),
        ("slidegen run ch01 --jobs 2", "chapter 1's experiments, in two processes"),
        ("slidegen run --list", "the experiments and their state, running nothing"),
    ),
    "inspect": (
        ("slidegen inspect 01", "a summary of deck 01: slides, layouts, references"),
        ("slidegen inspect 01 --json", "the whole parsed deck as JSON"),
    ),
    "results": _DIFF_EXAMPLES,
    "results diff": _DIFF_EXAMPLES,
    "list": _LIST_EXAMPLES,
    "list decks": _LIST_EXAMPLES,
    "list keys": _LIST_EXAMPLES,
    "list figures": _LIST_EXAMPLES,
}


def epilog(examples: Sequence[tuple[str, str]]) -> str:
    """The end of a ``--help``: the examples, each with what it does, then where the authoring guide is."""
    width = max(len(command) for command, _ in examples) + 2
    lines = [f"  {command.ljust(width)}{what}" for command, what in examples]
    return "examples:\n" + "\n".join(lines) + "\n\n" + GUIDE


class _Help(argparse.HelpFormatter):
    """argparse's help, the examples of the epilog kept line by line (descriptions are wrapped as usual)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parsers:
    """The top-level parser and each subcommand's, so an unknown flag is reported with its subcommand's usage."""

    def __init__(self) -> None:
        common = _common()
        self.top = argparse.ArgumentParser(
            prog="slidegen",
            description="Compile Slidev-style decks bound to results.md into reveal.js HTML and PowerPoint.",
            parents=[_common()],  # its own copy: set_defaults must not reach the subcommands' actions
        )
        self.top.set_defaults(quiet=False, verbose=False)
        self.top.add_argument("--version", action=_Version)
        commands = self.top.add_subparsers(dest="command", required=True, metavar="COMMAND")
        self.sub: dict[str, argparse.ArgumentParser] = {}

        def add(name: str, **kwargs: Any) -> argparse.ArgumentParser:
            parser = commands.add_parser(name, parents=[common], **kwargs)
            self.sub[name] = parser
            return parser

        init = add("init", help="write a small working project into a new or empty folder",
                   description="Write a small working project: a deck showing the main syntax with speaker "
                   "notes, results/results.md with a row a slide shows, references.bib with a work a slide "
                   "cites, and a component in components/. `build`, `check` and `serve` accept it at once.")
        init.add_argument("dir", nargs="?", default=".", metavar="DIR",
                          help="the project's folder: created when missing, refused when it holds anything "
                          "(default: the current folder)")

        build = add("build", help="build decks to HTML, PowerPoint, PDF or Markdown for other tools",
                    description="Build decks (default: every deck in decks/). A deck is named by path, "
                    "file name or number: `slidegen build 01`.")
        build.add_argument("decks", nargs="*", metavar="DECK",
                           help="deck files, names or numbers (default: every deck in decks/)")
        build.add_argument("--to", type=_formats, default=None, metavar="FORMATS",
                           help="comma-separated: html,pptx,pdf,png,md,marp (default: html,pptx)")
        build.add_argument("-o", "--out", type=Path, default=None, help="output folder (default: build/)")
        build.add_argument("--notes", action="store_true",
                           help="PDF: also write NN-slug.notes.pdf, each slide with its speaker notes under it")
        build.add_argument("--scale", type=float, default=1.5,
                           help="PNG: device pixels per CSS pixel of the 1280x720 slide (default 1.5: 1920x1080)")
        build.add_argument("--single-file", action="store_true",
                           help="HTML: each deck one self-contained file (scripts, styles, fonts, pictures inlined)")
        build.add_argument("--with-clicks", action="store_true",
                           help="PDF and PNG: a page (picture) per click of each slide, not only its final state")
        build.add_argument("--clicks", choices=("animate", "final"), default="animate",
                           help="PowerPoint: 'animate' (default) makes each click a native animation; "
                           "'final' draws every slide in its final state")
        build.add_argument("--strict", action="store_true",
                           help="fail (exit 1) when a built deck cites a stale result (one whose experiment changed)")
        build.add_argument("--force", action="store_true",
                           help="rebuild every output, even those whose inputs did not change")
        build.add_argument("-j", "--jobs", type=_jobs, default=0, metavar="N",
                           help="processes for HTML and PowerPoint (default 0: one per core; 1: no workers)")

        serve = add("serve", help="live preview: build to a temporary folder, serve, rebuild and reload on save")
        serve.add_argument("--port", type=_port, default=8000, help="port (default: 8000; 0 picks a free one)")
        serve.add_argument("--host", default=None,
                           help="address to bind (default: 127.0.0.1; any other address only when given here)")
        serve.add_argument("--open", action="store_true", help="open the index page in the web browser")

        check = add("check", help="check every deck against results.md (exit 1 on any error)",
                    description="Find every problem `slidegen build` would stop on, and more, writing nothing.")
        check.add_argument("--strict", action="store_true", help="also flag numbers typed by hand in slides and notes")
        check.add_argument("--strict-env", action="store_true",
                           help="results measured under other Python, NumPy or torch versions are errors")

        results = add("results", help="work with results/results.md")
        results_commands = results.add_subparsers(dest="results_command", required=True, metavar="ACTION")
        diff = results_commands.add_parser(
            "diff", parents=[common],
            help="results whose printed values changed against a git revision, and who cites them",
        )
        diff.add_argument("rev", nargs="?", default="HEAD", help="git revision to compare with (default: HEAD)")
        self.sub["results diff"] = diff

        self.sub["run"] = add_run_parser(commands, parents=[common])

        inspect = add("inspect", help="print a parsed deck: a summary, or JSON with --json")
        inspect.add_argument("deck", metavar="DECK", help="a deck file, name or number")
        inspect.add_argument("--json", action="store_true", help="print the whole parsed deck as JSON")

        listing = add("list", help="what exists: decks, result keys (with their citing slides), figures")
        what = listing.add_subparsers(dest="list_command", required=True, metavar="WHAT")
        self.sub["list decks"] = what.add_parser("decks", parents=[common], help="every deck, its slides and title")
        keys = what.add_parser("keys", parents=[common], help="result keys, their values and the slides citing them")
        keys.add_argument("pattern", nargs="?", default=None, metavar="PATTERN",
                          help="a glob (ch01.val_*) or any part of a key")
        self.sub["list keys"] = keys
        self.sub["list figures"] = what.add_parser("figures", parents=[common],
                                                   help="registered figures and the slides showing them")
        for name, parser in [("", self.top), *self.sub.items()]:
            parser.epilog = epilog(EXAMPLES[name])
            parser.formatter_class = _Help

    def parse(self, argv: Sequence[str] | None) -> argparse.Namespace:
        """Parse ``argv``; an unknown option is an error printed with its subcommand's usage (exit 2)."""
        args, extra = self.top.parse_known_args(argv)
        if extra:
            name = " ".join(n for n in (args.command, getattr(args, "results_command", None),
                                        getattr(args, "list_command", None)) if n)
            parser = self.sub.get(name, self.top)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return args


def make_parser() -> argparse.ArgumentParser:
    """The top-level parser (see :class:`Parsers` for the subcommands')."""
    return Parsers().top


# ---------------------------------------------------------------------- commands


def cmd_init(args: argparse.Namespace) -> int:
    import shlex

    from slidegen.cli.scaffold import init_project

    target = Path(args.dir)
    written = init_project(target)
    if not args.quiet:
        where = display_path(target.resolve())
        print(f"wrote a slidegen project into {where}/:")
        for path in written:
            print(f"  {path.relative_to(target).as_posix()}")
        step = "" if target.resolve() == Path.cwd().resolve() else f"cd {shlex.quote(args.dir)} && "
        print(f"next: {step}slidegen serve   (or slidegen build, slidegen check --strict)")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from slidegen.cli.decknames import resolve_decks
    from slidegen.formats import DEFAULT_FORMATS

    project = find_project()
    formats = args.to or DEFAULT_FORMATS
    if args.notes and "pdf" not in formats:
        raise UsageError("--notes writes the PDF with speaker notes: add pdf to --to (e.g. --to html,pdf)")
    if args.single_file and "html" not in formats:
        raise UsageError("--single-file makes each deck's HTML one file: add html to --to (e.g. --to html,pdf)")
    if args.with_clicks and not {"pdf", "png"} & set(formats):
        raise UsageError("--with-clicks prints each click of a slide to PDF or PNG: add pdf or png to --to")
    paths = resolve_decks(project, args.decks) if args.decks else None
    start = time.perf_counter()
    if not args.force and not (paths is None and project.unusable_decks()):
        # nothing changed: said from the manifest and file bytes, without loading the writers (a deck file
        # that cannot be read goes through the build, which reports it)
        from slidegen.pipeline.incremental import up_to_date

        warnings = up_to_date(project, paths or project.deck_paths(), formats, args.out or project.build_dir,
                              notes=args.notes, scale=args.scale, with_clicks=args.with_clicks,
                              animate=args.clicks == "animate", single_file=args.single_file)
        if warnings is not None:
            warnings = _strict_stale(warnings, args.strict)
            failed = any(w.severity == "error" for w in warnings)
            for warning in warnings:
                if not args.quiet or warning.severity == "error":
                    print(warning, file=sys.stderr)
            if not args.quiet:
                print(f"up to date ({time.perf_counter() - start:.2f} s)", file=sys.stderr)
            return 1 if failed else 0
    from slidegen.pipeline.build import build

    count = len(paths) if paths is not None else len(project.deck_paths())
    slow = any(flavor in formats for flavor in ("pdf", "png"))  # printed through Chromium: seconds per deck
    with _progress(args, count * len(formats), many=count > 1 or slow) as tick:
        report = build(project, paths, formats, args.out, notes=args.notes, progress=tick, scale=args.scale,
                       single_file=args.single_file,
                       with_clicks=args.with_clicks, animate=args.clicks == "animate",
                       force=args.force, jobs=args.jobs)
    report.diagnostics = _strict_stale(report.diagnostics, args.strict)
    for diagnostic in report.diagnostics:
        if not (args.quiet and diagnostic.severity != "error"):
            print(diagnostic, file=sys.stderr)
    for message in report.internal:
        print(message, file=sys.stderr)
    outputs = [p for p in report.written
               if p.suffix in (".html", ".pptx", ".pdf", ".png", ".md") and p.name != "index.html"]
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

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=console, transient=True)
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


def cmd_check(args: argparse.Namespace) -> int:
    from slidegen.check.project import check_project
    from slidegen.media.figures import FigureRenderer, figure_names
    from slidegen.record.discover import environment
    from slidegen.record.stale import current_fingerprints

    project = find_project()
    names = figure_names(project)
    diagnostics = check_project(
        project.root, strict=args.strict, fingerprints=current_fingerprints(project) or {}, figure_names=names,
        environment=environment(), strict_env=args.strict_env, verbose=args.verbose,
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


def cmd_inspect(args: argparse.Namespace) -> int:
    from slidegen.cli.decknames import resolve_deck
    from slidegen.read.parse import deck_to_json, parse_deck

    project = find_project()
    path = resolve_deck(project, args.deck)
    deck = parse_deck(path)
    if args.json:
        print(json.dumps(deck_to_json(deck), indent=2, ensure_ascii=False, default=str))
    else:
        from slidegen.cli.inspect import summary

        print("\n".join(summary(deck, display_path(path))))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from slidegen.cli import listing

    project = find_project()
    if args.list_command == "decks":
        lines = listing.list_decks(project)
    elif args.list_command == "keys":
        from slidegen.pipeline.bound import load_results

        lines = listing.list_keys(project, load_results(project), args.pattern)
    else:
        from slidegen.media.figures import discover_figures

        figures = {name: (info.path, info.line) for name, info in discover_figures(project).items()}
        lines = listing.list_figures(project, figures)
    print("\n".join(lines))
    return 0


COMMANDS = {"init": cmd_init, "build": cmd_build, "run": cmd_run, "check": cmd_check, "results": cmd_results,
            "inspect": cmd_inspect, "serve": cmd_serve, "list": cmd_list}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (never raises for bad input)."""
    parsers = Parsers()
    args = parsers.parse(argv)
    try:
        return COMMANDS[args.command](args)
    except SlidegenError as error:
        print(error.diagnostic, file=sys.stderr)
        return 1
    except UsageError as error:
        print(f"slidegen: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("slidegen: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `slidegen inspect ... | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:  # noqa: BLE001 (a bug: said as one, apart from problems in the content)
        print(internal_error(error), file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
