"""Parse and build time against deck size (run by hand: `make bench`): the targets the suite used to time.

The suite asserts behaviour only; the times it once asserted are measured here, each against its target:

- parsing a deck of more than 500 slides (the sample deck, repeated): under 2 s;
- building one deck of 500 and one of 4,000 slides: linear (8 times the slides in under 20 times the
  time, far from the 64 times a quadratic step would take) and the large one under 30 s;
- building a deck with a code block in a language whose lexer is slow to load (``mcschema``): under 20 s.

Prints one line per target and exits 1 when one is missed.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SAMPLE = HERE / "tests" / "fixtures" / "decks" / "sample.md"


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def build_deck(root: Path, name: str, text: str) -> float:
    """Seconds to build ``text`` as ``decks/NAME`` of the project at ``root`` (HTML and PowerPoint)."""
    from slidegen.cli.main import main

    (root / "decks").mkdir(parents=True, exist_ok=True)
    (root / "decks" / name).write_text(text, encoding="utf-8")
    with contextlib.redirect_stderr(io.StringIO()):
        seconds = timed(lambda: main(["build", f"decks/{name}"]))
    return seconds


def main() -> int:
    sys.path.insert(0, str(HERE))
    from slidegen.read.parse import parse_text

    results: list[tuple[str, float, str, bool]] = []
    text = SAMPLE.read_text(encoding="utf-8")
    body = re.sub(r"^id: .*\n", "", text.split("---\n", 2)[2], flags=re.MULTILINE)  # no headmatter, no ids
    big = text + "".join("\n---\n\n" + body for _ in range(38))
    start = time.perf_counter()
    slides = len(parse_text(big, Path("big.md")).slides)  # the first parse: the parser's set-up included
    seconds = time.perf_counter() - start
    results.append((f"parse {slides} slides", seconds, "< 2 s", seconds < 2.0))

    with tempfile.TemporaryDirectory(prefix="slidegen-bench-") as tmp:
        root = Path(tmp)
        cwd = os.getcwd()
        os.chdir(root)
        try:
            build_deck(root, "00-warm.md", "# a\n" + "\n---\n\n<!-- n -->\n" * 10)
            small = build_deck(root, "01-small.md", "# a\n" + "\n---\n\n<!-- n -->\n" * 500)
            large = build_deck(root, "02-large.md", "# a\n" + "\n---\n\n<!-- n -->\n" * 4000)
            code = build_deck(root, "03-code.md", '# T\n\n```mcschema\n{"a": [1, 2], "b": "c"}\n```\n')
        finally:
            os.chdir(cwd)
    results.append(("build 500 slides", small, "", True))
    results.append(("build 4,000 slides", large, "< 20 x the 500's, < 30 s", large < 20 * small and large < 30))
    results.append(("build an mcschema code block", code, "< 20 s", code < 20))

    for what, seconds, target, met in results:
        print(f"{what:32} {seconds:7.2f} s  {target:26} {'ok' if met else 'MISSED'}")
    return 0 if all(met for *_, met in results) else 1


if __name__ == "__main__":
    sys.exit(main())
