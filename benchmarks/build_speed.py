"""Build speed: slidegen against pandoc on the same generated decks (run by hand: `make bench`).

Generates decks of 20 slides (headings, bullets, a table, a code block, display and inline
math, speaker notes) in temporary projects of 14 and 56 decks, then times, as whole commands
(start-up included), side by side in one run:

- `slidegen --version` (the start-up floor);
- slidegen, HTML and PowerPoint: a cold build (empty build/ and caches), a full warm build
  (`--force`: every output written again, caches warm), with one process per core and with
  `--jobs 1`; a no-op rebuild (nothing changed); one deck rebuilt after editing one slide;
- pandoc (Debian package): each deck to reveal.js HTML and to PPTX, one process per output;
- `slidegen serve`: from saving a 25-slide deck to the open page (Chromium through Playwright)
  showing the edit, median of 20 edits;
- a copy of this project's own decks (citations, cited numbers, figures, components), its drawn
  figures and pictures copied too: deck 02 touched (new mtime, same bytes), and one line of it
  edited, each rebuilt with `slidegen build 02`.

Prints a Markdown table for the README. `--quick` runs fewer repeats and only 14 decks.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

N_SLIDES = 20
SERVE_SLIDES = 25
SERVE_EDITS = 20
HERE = Path(__file__).resolve().parents[1]


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


def deck_text(d: int, slides: int = N_SLIDES) -> str:
    return f"---\ntitle: Deck {d}\nchapter: {d}\n---\n\n" + "\n---\n\n".join(slide(i) for i in range(slides))


def make_project(root: Path, decks: int, first_slides: int = N_SLIDES) -> list[Path]:
    """``decks`` generated decks under ``root/decks`` (the first with ``first_slides`` slides)."""
    folder = root / "decks"
    folder.mkdir(parents=True)
    paths = []
    for d in range(1, decks + 1):
        path = folder / f"{d:02d}-deck.md"
        path.write_text(deck_text(d, first_slides if d == 1 else N_SLIDES), encoding="utf-8")
        paths.append(path)
    os.symlink(HERE / "node_modules", root / "node_modules")  # the HTML assets
    return paths


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def median(cmd: list[str], cwd: Path, repeats: int, before: object = None) -> float:
    times = []
    for _ in range(repeats):
        if callable(before):
            before()
        times.append(timed(cmd, cwd))
    return statistics.median(times)


def pandoc_all(paths: list[Path], out: Path) -> list[str]:
    """One shell line building every deck with pandoc to both formats, one process per output."""
    lines = []
    for p in paths:
        lines.append(f"pandoc -s -t revealjs --mathjax -o {out / (p.stem + '.html')} {p}")
        lines.append(f"pandoc -t pptx -o {out / (p.stem + '.pptx')} {p}")
    return ["sh", "-c", " && ".join(lines)]


def edit_one_slide(path: Path, n: int) -> None:
    text = path.read_text(encoding="utf-8")
    start = text.index("# Slide 4:")
    end = text.index("\n", start)
    path.write_text(text[:start] + f"# Slide 4: edit {n}" + text[end:], encoding="utf-8")


def builds(slidegen: str, decks: int, repeats: int) -> list[tuple[str, float]]:
    """The build rows for one project of ``decks`` decks."""
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_project(root, decks)
        build = [slidegen, "build"]

        def clean() -> None:
            shutil.rmtree(root / "build", ignore_errors=True)

        rows.append(
            (
                f"{decks} decks: slidegen, cold (empty build/ and caches), 2 processes",
                median(build, root, max(1, repeats // 2), clean),
            )
        )
        rows.append(
            (
                f"{decks} decks: slidegen, cold, `--jobs 1`",
                median([*build, "-j", "1"], root, max(1, repeats // 2), clean),
            )
        )
        rows.append(
            (
                f"{decks} decks: slidegen, full warm build (`--force`), 2 processes",
                median([*build, "--force"], root, repeats),
            )
        )
        rows.append(
            (
                f"{decks} decks: slidegen, full warm build, `--jobs 1`",
                median([*build, "--force", "-j", "1"], root, repeats),
            )
        )
        if shutil.which("pandoc"):
            out = root / "pandoc-out"
            out.mkdir()
            rows.append(
                (
                    f"{decks} decks: pandoc, reveal.js HTML + PPTX (one process per output)",
                    median(pandoc_all(paths, out), root, max(1, repeats // 2)),
                )
            )
        if decks == 14:
            timed(build, root)
            rows.append((f"{decks} decks: slidegen, no-op rebuild (nothing changed)", median(build, root, repeats)))
            count = iter(range(1000))
            rows.append(
                (
                    f"{decks} decks: slidegen, one slide of one deck edited (`slidegen build`)",
                    median(build, root, repeats, lambda: edit_one_slide(paths[0], next(count))),
                )
            )
            rows.append(
                (
                    f"{decks} decks: slidegen, the same, naming the deck (`slidegen build 01`)",
                    median([*build, "01"], root, repeats, lambda: edit_one_slide(paths[0], next(count))),
                )
            )
    return rows


#: What a copy of this project needs to build its decks (and, when there, its drawn figures and caches).
PROJECT_FILES = ("decks", "results", "references.bib", "styles", "components", "figures", "model", "pyproject.toml")
REAL_DECK = "02"


def edit_one_line(path: Path, n: int) -> None:
    """Change the first bullet of ``path`` (a real deck): one slide's text, nothing the index shows."""
    lines = path.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("- "))
    lines[at] = lines[at].split(" (edit ")[0] + f" (edit {n})"
    path.write_text("\n".join(lines), encoding="utf-8")


def real_decks(slidegen: str, repeats: int) -> list[tuple[str, float]]:
    """The one-deck rows on a copy of this project's own decks (empty when it has none)."""
    if not (HERE / "decks").is_dir():
        return []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in PROJECT_FILES:
            source = HERE / name
            if source.is_dir():
                shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
            elif source.is_file():
                shutil.copy(source, root / name)
        for name in ("figures", "cache"):  # drawn figures, equations and pictures: a warm project
            if (HERE / "build" / name).is_dir():
                shutil.copytree(HERE / "build" / name, root / "build" / name)
        os.symlink(HERE / "node_modules", root / "node_modules")
        deck = next((root / "decks").glob(f"{REAL_DECK}-*.md"))
        count = len(list((root / "decks").glob("*.md")))
        timed([slidegen, "build"], root)  # every deck once: the manifest
        build = [slidegen, "build", REAL_DECK]
        numbers = iter(range(1000))
        return [
            (
                f"this project's {count} decks: deck {REAL_DECK} touched, bytes unchanged "
                f"(`slidegen build {REAL_DECK}`)",
                median(build, root, repeats, lambda: os.utime(deck)),
            ),
            (
                f"this project's {count} decks: one line of deck {REAL_DECK} edited (`slidegen build {REAL_DECK}`)",
                median(build, root, repeats, lambda: edit_one_line(deck, next(numbers))),
            ),
        ]


def serve_reload(slidegen: str, edits: int) -> tuple[float, float] | None:
    """Median and slowest seconds from saving a 25-slide deck to the open page showing the edit."""
    timing = serve_timing(slidegen, edits)
    return None if timing is None else (timing[0], timing[1])


def serve_timing(slidegen: str, edits: int) -> tuple[float, float, str] | None:
    """:func:`serve_reload`, and where the median edit's time went (from the server's log: save to notice,
    build; the rest is the event and the page patching the slide, or reloading)."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("serve: playwright is not installed (pip install playwright)", file=sys.stderr)
        return None
    if not Path(chromium).is_file():
        print("serve: no Chromium (apt-get install chromium)", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_project(root, 14, first_slides=SERVE_SLIDES)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        child = subprocess.Popen(
            [slidegen, "serve", "--port", "0"],
            cwd=root,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        log: queue.Queue[str] = queue.Queue()
        try:
            line = ""
            while "serving" not in line:
                line = child.stderr.readline() if child.stderr else ""
                if not line and child.poll() is not None:
                    raise RuntimeError("slidegen serve did not start")

            def read_log() -> None:
                for text in child.stderr or ():
                    log.put(text)

            threading.Thread(target=read_log, daemon=True).start()
            url = line.split()[1]
            times: list[tuple[float, str, str]] = []
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(url + "01-deck.html#/4")
                page.wait_for_function("window.Reveal && Reveal.isReady() && window.__slidegenLive === true")
                time.sleep(1.0)  # the watcher is set up
                page.evaluate("window.__slidegenLoaded = performance.timeOrigin")
                for n in range(edits):
                    start = time.perf_counter()
                    edit_one_slide(paths[0], n)
                    page.wait_for_function(
                        f"window.Reveal && Reveal.isReady() && Reveal.getCurrentSlide().textContent"
                        f".includes('edit {n}')",
                        polling=5,
                        timeout=20000,
                    )
                    seconds = time.perf_counter() - start
                    how = (
                        "patched" if page.evaluate("window.__slidegenLoaded === performance.timeOrigin") else "reloaded"
                    )
                    time.sleep(0.3)
                    said = ""
                    while not log.empty():
                        said = log.get().strip() or said
                    times.append((seconds, how, said))
                    if page.evaluate("Reveal.getIndices().h") != 4:
                        raise RuntimeError("the page came back on another slide")
                    page.evaluate("window.__slidegenLoaded = performance.timeOrigin")
                browser.close()
            ordered = sorted(times)
            seconds, how, said = ordered[len(ordered) // 2]
            return statistics.median(t for t, _, _ in times), ordered[-1][0], f"{how}; server: {said}"
        finally:
            child.terminate()
            child.wait(timeout=10)


def serve_rows(slidegen: str, edits: int) -> list[tuple[str, float]]:
    """The serve rows alone (``--serve-only``), where the median edit's time went on stderr."""
    reload = serve_timing(slidegen, edits)
    if reload is None:
        return []
    print(f"serve, the median edit: {reload[2]}", file=sys.stderr)
    return [
        (f"serve: save to page showing the edit, {SERVE_SLIDES}-slide deck, median of {edits}", reload[0]),
        ("serve: the same, slowest edit", reload[1]),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="14 decks only, fewer repeats and edits")
    parser.add_argument("--repeats", type=int, default=5, help="runs per timing (median; cold builds: half)")
    parser.add_argument("--serve-only", action="store_true", help="only the serve rows")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    edits = 5 if args.quick else SERVE_EDITS
    slidegen = str(Path(sys.executable).with_name("slidegen"))
    print(
        f"{N_SLIDES}-slide decks, median of {repeats} (cold builds and pandoc: {max(1, repeats // 2)}), "
        f"{os.cpu_count()} cores\n"
    )
    print("| what | seconds |\n|---|---:|", flush=True)

    def show(rows: list[tuple[str, float]]) -> None:
        for name, seconds in rows:
            print(f"| {name} | {seconds:.2f} |", flush=True)

    if args.serve_only:
        show(serve_rows(slidegen, edits))
        return 0
    show([("`slidegen --version`", median([slidegen, "--version"], HERE, repeats))])
    show(builds(slidegen, 14, repeats))
    show(real_decks(slidegen, repeats))
    reload = serve_reload(slidegen, edits)
    if reload is not None:
        show(
            [
                (f"serve: save to page showing the edit, {SERVE_SLIDES}-slide deck, median of {edits}", reload[0]),
                ("serve: the same, slowest edit", reload[1]),
            ]
        )
    if not args.quick:
        show(builds(slidegen, 56, repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
