"""The command line: ``slidegen build | run | check | serve | inspect | results diff``.

Exit codes: 0 fine, 1 problems in the content (each printed as ``file:line:col: error: ...``),
2 usage errors, 70 a bug in slidegen ("internal error, please report", with where it happened).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .cmd_run import add_run_parser, cmd_run
from .errors import EXIT_INTERNAL, SlidegenError, UsageError, display_path, internal_error
from .project import find_project


def _formats(value: str) -> list[str]:
    from .build import FORMATS

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


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slidegen",
        description="Compile Slidev-style decks bound to results.md into reveal.js HTML and PowerPoint.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser("build", help="build decks to HTML, PowerPoint, PDF or Markdown for other tools")
    build.add_argument("decks", nargs="*", type=Path, metavar="DECK", help="deck files (default: every deck in decks/)")
    build.add_argument("--to", type=_formats, default=None, metavar="FORMATS",
                       help="comma-separated: html,pptx,pdf,png,md,marp (default: html,pptx)")
    build.add_argument("--out", type=Path, default=None, help="output folder (default: build/)")
    build.add_argument("--notes", action="store_true", help="PDF: print each slide's speaker notes under it")
    build.add_argument("--scale", type=float, default=1.5,
                       help="PNG: device pixels per CSS pixel of the 1280x720 slide (default 1.5: 1920x1080)")

    serve = commands.add_parser(
        "serve", help="live preview: build to a temporary folder, serve, rebuild and reload on save"
    )
    serve.add_argument("--port", type=_port, default=8000, help="port (default: 8000; 0 picks a free one)")
    serve.add_argument("--host", default=None,
                       help="address to bind (default: 127.0.0.1; any other address only when given here)")

    check = commands.add_parser("check", help="check every deck against results.md (exit 1 on any error)")
    check.add_argument("--strict", action="store_true", help="also flag numbers typed by hand in slides and notes")

    results = commands.add_parser("results", help="work with results/results.md")
    results_commands = results.add_subparsers(dest="results_command", required=True, metavar="ACTION")
    diff = results_commands.add_parser(
        "diff", help="keys whose values changed against a git revision, and who cites them"
    )
    diff.add_argument("rev", nargs="?", default="HEAD", help="git revision to compare with (default: HEAD)")

    add_run_parser(commands)

    inspect = commands.add_parser("inspect", help="print a parsed deck")
    inspect.add_argument("deck", type=Path, metavar="DECK")
    inspect.add_argument("--json", action="store_true", help="print JSON (the only format for now)")
    return parser


def cmd_build(args: argparse.Namespace) -> int:
    from .build import DEFAULT_FORMATS, build

    project = find_project()
    for path in args.decks:
        if not path.is_file():
            raise UsageError(f"no such deck: {path}")
    start = time.perf_counter()
    report = build(project, args.decks or None, args.to or DEFAULT_FORMATS, args.out, notes=args.notes,
                   scale=args.scale)
    for diagnostic in report.diagnostics:
        print(diagnostic, file=sys.stderr)
    for message in report.internal:
        print(message, file=sys.stderr)
    outputs = [p for p in report.written
               if p.suffix in (".html", ".pptx", ".pdf", ".png", ".md") and p.name != "index.html"]
    print(
        f"built {len(outputs)} file(s) in {time.perf_counter() - start:.2f} s"
        + (f" into {display_path(args.out or project.build_dir)}/" if outputs else ""),
        file=sys.stderr,
    )
    return EXIT_INTERNAL if report.internal else 1 if report.failed else 0


def cmd_check(args: argparse.Namespace) -> int:
    from .check import check_project
    from .discover import current_fingerprints
    from .figures import FigureRenderer, figure_names

    project = find_project()
    names = figure_names(project)
    diagnostics = check_project(
        project.root, strict=args.strict, fingerprints=current_fingerprints(project), figure_names=names
    )
    diagnostics += FigureRenderer(project).problems(names)
    for diagnostic in diagnostics:
        print(diagnostic, file=sys.stderr if diagnostic.severity == "error" else sys.stdout)
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    print(f"{len(project.deck_paths())} deck(s) checked: {errors} error(s), {warnings} warning(s)")
    return 1 if errors else 0


def cmd_results(args: argparse.Namespace) -> int:
    from .results_diff import results_diff

    changes = results_diff(find_project().root, args.rev)
    for change in changes:
        print(change)
    if not changes:
        print(f"no result changed since {args.rev}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .serve import DEFAULT_HOST, serve

    # the default is loopback; any other address must come from an explicit --host
    return serve(find_project(), host=args.host or DEFAULT_HOST, port=args.port, allow_remote=args.host is not None)


def cmd_inspect(args: argparse.Namespace) -> int:
    from .parse import deck_to_json, parse_deck

    if not args.deck.is_file():
        raise UsageError(f"no such deck: {args.deck}")
    deck = parse_deck(args.deck)
    print(json.dumps(deck_to_json(deck), indent=2, ensure_ascii=False, default=str))
    return 0


COMMANDS = {"build": cmd_build, "run": cmd_run, "check": cmd_check, "results": cmd_results, "inspect": cmd_inspect,
            "serve": cmd_serve}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (never raises for bad input)."""
    parser = make_parser()
    args = parser.parse_args(argv)
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
