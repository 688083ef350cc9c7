"""The command line: ``slidegen init | build | run | check | serve | inspect | list | results diff``.

Exit codes: 0 fine, 1 problems in the content (each printed as ``file:line:col: error: ...``),
2 usage errors (with the subcommand's usage), 70 a bug in slidegen ("internal error, please
report", with where it happened). ``-q`` keeps only errors, ``-v`` says more; ``NO_COLOR``
(any value) turns colour off in every command.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slidegen.cli import build, check, init, inspect, listing, results, run, serve
from slidegen.cli.run import add_run_parser
from slidegen.errors import EXIT_INTERNAL, SlidegenError, UsageError, internal_error


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
    group.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="print only errors")
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print more (every result no slide cites, every file written)",
    )
    return common


class _Version(argparse._VersionAction):
    """``--version``, whose version is looked up only when asked for (the look-up imports importlib.metadata
    and scans site-packages: a third of the start-up of every other command)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
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

        init = add(
            "init",
            help="write a small working project into a new or empty folder",
            description="Write a small working project: a deck showing the main syntax with speaker "
            "notes, results/results.md with a row a slide shows, references.bib with a work a slide "
            "cites, and a component in components/. `build`, `check` and `serve` accept it at once.",
        )
        init.add_argument(
            "dir",
            nargs="?",
            default=".",
            metavar="DIR",
            help="the project's folder: created when missing, refused when it holds anything "
            "(default: the current folder)",
        )

        build = add(
            "build",
            help="build decks to HTML, PowerPoint, PDF or Markdown for other tools",
            description="Build decks (default: every deck in decks/). A deck is named by path, "
            "file name or number: `slidegen build 01`.",
        )
        build.add_argument(
            "decks", nargs="*", metavar="DECK", help="deck files, names or numbers (default: every deck in decks/)"
        )
        build.add_argument(
            "--to",
            type=_formats,
            default=None,
            metavar="FORMATS",
            help="comma-separated: html,pptx,pdf,png,md,marp (default: html,pptx)",
        )
        build.add_argument("-o", "--out", type=Path, default=None, help="output folder (default: build/)")
        build.add_argument(
            "--notes",
            action="store_true",
            help="PDF: also write NN-slug.notes.pdf, each slide with its speaker notes under it",
        )
        build.add_argument(
            "--scale",
            type=float,
            default=1.5,
            help="PNG: device pixels per CSS pixel of the 1280x720 slide (default 1.5: 1920x1080)",
        )
        build.add_argument(
            "--single-file",
            action="store_true",
            help="HTML: each deck one self-contained file (scripts, styles, fonts, pictures inlined)",
        )
        build.add_argument(
            "--with-clicks",
            action="store_true",
            help="PDF and PNG: a page (picture) per click of each slide, not only its final state",
        )
        build.add_argument(
            "--clicks",
            choices=("animate", "final"),
            default="animate",
            help="PowerPoint: 'animate' (default) makes each click a native animation; "
            "'final' draws every slide in its final state",
        )
        build.add_argument(
            "--strict",
            action="store_true",
            help="fail (exit 1) when a built deck cites a stale result (one whose experiment changed)",
        )
        build.add_argument(
            "--force", action="store_true", help="rebuild every output, even those whose inputs did not change"
        )
        build.add_argument(
            "-j",
            "--jobs",
            type=_jobs,
            default=0,
            metavar="N",
            help="processes for HTML and PowerPoint (default 0: one per core; 1: no workers)",
        )

        serve = add("serve", help="live preview: build to a temporary folder, serve, rebuild and reload on save")
        serve.add_argument("--port", type=_port, default=8000, help="port (default: 8000; 0 picks a free one)")
        serve.add_argument(
            "--host", default=None, help="address to bind (default: 127.0.0.1; any other address only when given here)"
        )
        serve.add_argument("--open", action="store_true", help="open the index page in the web browser")

        check = add(
            "check",
            help="check every deck against results.md (exit 1 on any error)",
            description="Find every problem `slidegen build` would stop on, and more, writing nothing.",
        )
        check.add_argument("--strict", action="store_true", help="also flag numbers typed by hand in slides and notes")
        check.add_argument(
            "--strict-env",
            action="store_true",
            help="results measured under other Python, NumPy or torch versions are errors",
        )

        results = add("results", help="work with results/results.md")
        results_commands = results.add_subparsers(dest="results_command", required=True, metavar="ACTION")
        diff = results_commands.add_parser(
            "diff",
            parents=[common],
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
        keys.add_argument(
            "pattern", nargs="?", default=None, metavar="PATTERN", help="a glob (ch01.val_*) or any part of a key"
        )
        self.sub["list keys"] = keys
        self.sub["list figures"] = what.add_parser(
            "figures", parents=[common], help="registered figures and the slides showing them"
        )
        for name, parser in [("", self.top), *self.sub.items()]:
            parser.epilog = epilog(EXAMPLES[name])
            parser.formatter_class = _Help

    def parse(self, argv: Sequence[str] | None) -> argparse.Namespace:
        """Parse ``argv``; an unknown option is an error printed with its subcommand's usage (exit 2)."""
        args, extra = self.top.parse_known_args(argv)
        if extra:
            name = " ".join(
                n
                for n in (args.command, getattr(args, "results_command", None), getattr(args, "list_command", None))
                if n
            )
            parser = self.sub.get(name, self.top)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return args


def make_parser() -> argparse.ArgumentParser:
    """The top-level parser (see :class:`Parsers` for the subcommands')."""
    return Parsers().top


# ---------------------------------------------------------------------- commands


COMMANDS = {
    "init": init.cmd_init,
    "build": build.cmd_build,
    "run": run.cmd_run,
    "check": check.cmd_check,
    "results": results.cmd_results,
    "inspect": inspect.cmd_inspect,
    "serve": serve.cmd_serve,
    "list": listing.cmd_list,
}


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
