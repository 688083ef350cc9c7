"""Build speed: slidegen against pandoc on the same generated decks (run by hand: `make bench`).

Generates 14 decks of 20 slides (headings, bullets, a table, a code block, display and
inline math, speaker notes) in a temporary project, then times, as whole commands:

- slidegen: a cold build (first run: empty caches), a warm build of both outputs, and a
  rebuild of one deck (`slidegen build decks/x.md`), start-up included;
- pandoc (Debian package): each deck to reveal.js HTML and to PPTX.

Prints a Markdown table for the README.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_DECKS = 14
N_SLIDES = 20
REPEATS = 3


def slide(i: int) -> str:
    kind = i % 5
    head = f"# Slide {i}: a point worth making\n\n"
    notes = f"\n<!-- Say why slide {i} matters, in two sentences. Then move on. -->\n"
    if kind == 0:
        body = "".join(f"- Point {j} with a little *emphasis* and `code`\n" for j in range(5))
    elif kind == 1:
        body = "| run | loss | steps |\n|---|---:|---:|\n" + "".join(
            f"| seed {j} | 2.{j}0 | 2000 |\n" for j in range(4)
        )
    elif kind == 2:
        body = (
            "```python\nfor step in range(steps):\n    x, y = batch()\n"
            "    loss = model(x, y)\n    loss.backward()\n    opt.step()\n```\n"
        )
    elif kind == 3:
        body = (
            "The loss is $L = -\\log p_y$ and its gradient at the logits is\n\n"
            "$$\n\\frac{\\partial L}{\\partial z_i} = p_i - y_i\n$$\n"
        )
    else:
        body = "A paragraph of ordinary prose that explains what the audience sees, " * 3 + "\n"
    return head + body + notes


def make_project(root: Path) -> list[Path]:
    decks = root / "decks"
    decks.mkdir(parents=True)
    paths = []
    for d in range(1, N_DECKS + 1):
        text = f"---\ntitle: Deck {d}\nchapter: {d}\n---\n\n" + "\n---\n\n".join(slide(i) for i in range(N_SLIDES))
        path = decks / f"{d:02d}-deck.md"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def pandoc_all(paths: list[Path], out: Path) -> list[str]:
    """One shell line building every deck with pandoc to both formats, one process per output."""
    lines = []
    for p in paths:
        lines.append(f"pandoc -s -t revealjs --mathjax -o {out / (p.stem + '.html')} {p}")
        lines.append(f"pandoc -t pptx -o {out / (p.stem + '.pptx')} {p}")
    return ["sh", "-c", " && ".join(lines)]


def main() -> int:
    slidegen = Path(sys.executable).with_name("slidegen")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_project(root)
        # node_modules is needed for the HTML assets: point the project at ours.
        here = Path(__file__).resolve().parents[1]
        os.symlink(here / "node_modules", root / "node_modules")
        cold = timed([str(slidegen), "build"], root)
        warm = [timed([str(slidegen), "build"], root) for _ in range(REPEATS)]
        one = [timed([str(slidegen), "build", str(paths[0])], root) for _ in range(REPEATS)]
        rows = [
            ("slidegen, cold (empty caches), both formats", cold),
            ("slidegen, warm, both formats", statistics.median(warm)),
            ("slidegen, one deck rebuilt, both formats", statistics.median(one)),
        ]
        if shutil.which("pandoc"):
            out = root / "pandoc-out"
            out.mkdir()
            pandoc = [timed(pandoc_all(paths, out), root) for _ in range(REPEATS)]
            rows.append(("pandoc, reveal.js HTML + PPTX", statistics.median(pandoc)))
        else:
            print("pandoc not found: apt-get install pandoc", file=sys.stderr)

    print(f"{N_DECKS} decks x {N_SLIDES} slides, median of {REPEATS}, {os.cpu_count()} cores\n")
    print("| build | seconds |\n|---|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
