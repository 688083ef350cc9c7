"""The package as a pip user gets it: build the sdist and wheel from the repository's files, install the
wheel into a fresh virtual environment outside the checkout (no system site-packages, no node_modules
anywhere on the path), and with its ``slidegen``:

- build a fixture deck using every feature that reads a file the wheel must carry (Mermaid, a component,
  math, code steps, citations in the default CSL style, a picture) to HTML, PowerPoint, PDF and PNG, and
  to single-file HTML, and open the HTML in Chromium;
- ``slidegen init talk``, then in it ``slidegen build --to html,pptx,pdf,png`` and ``check --strict``;
- ``slidegen run --list`` in a project without experiments (no torch asked for), ``slidegen run`` in one
  with experiments (one line naming what to install).

About a minute and a half (building in two isolated environments, installing the dependencies from the
package index, Chromium printing); marked ``install``, so ``pytest -m "not install"`` leaves it out.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import needs
import pytest

from slidegen.write.pdf import CHROMIUM_ARGS

pytestmark = [pytest.mark.install, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]

DECK = """\
---
title: Installed
chapter: 1
---

# Installed from a wheel

It has {{ demo.params | int }} parameters [@example2020].

<!-- The number comes from results.md. -->

---

# Math and code

$$
\\mathcal{L} = -\\frac{1}{N}\\sum_i \\log p(x_i)
$$

Inline $e^{i\\pi} + 1 = 0$ too.

```python {1|2}
loss = model(x).mean()
loss.backward()
```

---

# A picture

![a square](img/square.png)

---

# A diagram

```mermaid
flowchart LR
  deck[Deck] --> html[HTML]
  deck --> pptx[PowerPoint]
```

---

# A component

<tally-counter start="3" step="2" alt="A counter that starts at 3"></tally-counter>
"""

RESULTS = """\
# Results

## demo

| key | value | digits | sd | n | unit | what | source |
|---|---|---|---|---|---|---|---|
| demo.params | 5376 | 4 | | | | parameters | cited: Example 2020 |
"""

BIB = "@misc{example2020,\n  author = {Example, Ada},\n  title = {An Example},\n  year = {2020},\n}\n"
#: The fixture deck's slides: its five and the references slide its citation adds.
SLIDES = 6
COMPONENTS = REPO / "tests" / "fixtures" / "components" / "components"


def _env() -> dict[str, str]:
    """This environment without anything pointing at the source tree or this venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    return env


def _run(args: list[str | Path], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


def _source_copy(target: Path) -> Path:
    """The repository's files (tracked, or new and not ignored) as a fresh clone has them, plus node_modules
    (which a clone gets from `npm ci`)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        needs.missing("the install test copies the repository's files with git")
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / rel)
    modules = REPO / "node_modules"
    if not (modules / "reveal.js").is_dir():
        needs.missing("node_modules is missing: run `npm ci` (the wheel carries its files)")
    (target / "node_modules").symlink_to(modules.resolve())
    return target


def _timed(times: dict[str, float], step: str, args: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    start = time.perf_counter()
    done = _run(args, cwd=cwd)
    times[step] = time.perf_counter() - start
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Build, install into a fresh venv, build the fixture deck and an init project; what each step took."""
    needs.module("build", "pip install build (in the dev extra)")
    needs.chromium()  # PDF, PNG and the PowerPoint pictures of the diagram and the component
    tmp = tmp_path_factory.mktemp("install")
    times: dict[str, float] = {}

    start = time.perf_counter()
    source = _source_copy(tmp / "src")
    done = _run([sys.executable, "-m", "build", "--outdir", tmp / "dist", source], cwd=tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    noisy = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if "deprecat" in line.lower() or ("license" in line.lower() and "warn" in line.lower())
    ]
    assert not noisy, noisy  # the packaging metadata warnings are gone
    times["build sdist and wheel"] = time.perf_counter() - start

    start = time.perf_counter()
    venv = tmp / "venv"
    done = _run([sys.executable, "-m", "venv", venv], cwd=tmp)
    assert done.returncode == 0, done.stderr
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    wheel = next((tmp / "dist").glob("slidegen-*.whl"))
    done = _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-compile", wheel], cwd=tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    times["install the wheel"] = time.perf_counter() - start

    slidegen = venv / "bin" / "slidegen"
    project = tmp / "project"
    (project / "decks" / "img").mkdir(parents=True)
    (project / "results").mkdir()
    (project / "decks" / "01-installed.md").write_text(DECK, encoding="utf-8")
    picture = REPO / "tests" / "fixtures" / "decks" / "img" / "loss.png"
    shutil.copyfile(picture, project / "decks" / "img" / "square.png")
    (project / "results" / "results.md").write_text(RESULTS, encoding="utf-8")
    (project / "references.bib").write_text(BIB, encoding="utf-8")  # no styles/: the wheel's own CSL style
    shutil.copytree(COMPONENTS, project / "components")
    built = _timed(times, "slidegen build", [slidegen, "build", "--to", "html,pptx,pdf,png"], project)
    single = _timed(times, "single-file", [slidegen, "build", "--to", "html", "--single-file", "-o", "single"], project)
    checked = _timed(times, "check", [slidegen, "check", "--strict"], project)

    made = _timed(times, "init", [slidegen, "init", "talk"], tmp)
    talk = tmp / "talk"
    talk_built = _timed(times, "init build", [slidegen, "build", "--to", "html,pptx,pdf,png"], talk)
    talk_checked = _timed(times, "init check", [slidegen, "check", "--strict"], talk)
    print("\ninstall test: " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in times.items()))
    return {
        "tmp": tmp,
        "venv": venv,
        "wheel": wheel,
        "project": project,
        "built": built,
        "single": single,
        "checked": checked,
        "talk": talk,
        "made": made,
        "talk_built": talk_built,
        "talk_checked": talk_checked,
    }


def _ok(done: object) -> None:
    assert isinstance(done, subprocess.CompletedProcess)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr


def test_the_wheel_and_sdist_carry_the_web_assets_and_not_node_modules(installed: dict) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()  # type: ignore[arg-type]
    vendor = "slidegen/_vendor/node_modules/"
    for rel in (
        "reveal.js/dist/reveal.js",
        "reveal.js/dist/plugin/notes.js",
        "katex/dist/katex.min.js",
        "katex/dist/katex.min.css",
        "katex/dist/fonts/KaTeX_Main-Regular.woff2",
        "reveal.js/LICENSE",
        "katex/LICENSE",
    ):
        assert vendor + rel in names
    if (REPO / "node_modules" / "mermaid" / "dist" / "mermaid.min.js").is_file():
        assert vendor + "mermaid/dist/mermaid.min.js" in names
        assert vendor + "mermaid/package.json" in names  # its version is part of each diagram picture's key
    assert not [n for n in names if "node_modules" in n and not n.startswith(vendor)]
    assert "slidegen/templates/deck.html.j2" in names
    assert "slidegen/csl/author-date.csl" in names
    starter = sorted(n.removeprefix("slidegen/starter/") for n in names if n.startswith("slidegen/starter/"))
    assert starter == [
        "README.md",
        "components/ema-window.css",
        "components/ema-window.js",
        "decks/01-first-talk.md",
        "gitignore",
        "references.bib",
        "results/results.md",
    ]
    tops = {name.split("/", 1)[0] for name in names}
    assert not tops & {"model", "figures"}, tops  # only the compiler: the project's code stays the project's
    sdist = next(Path(installed["tmp"], "dist").glob("slidegen-*.tar.gz"))  # type: ignore[arg-type]
    with tarfile.open(sdist) as tar:
        assert any(n.endswith(vendor + "reveal.js/dist/reveal.js") for n in tar.getnames())
    assert (
        "slidegen/_vendor" not in subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True).stdout
    )  # never committed


def _pptx_text_and_pictures(path: Path) -> tuple[str, list[int]]:
    """A PowerPoint file's text, and how many pictures each slide holds."""
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    deck = Presentation(str(path))
    text = " ".join(shape.text_frame.text for slide in deck.slides for shape in slide.shapes if shape.has_text_frame)
    pictures = [sum(shape.shape_type == MSO_SHAPE_TYPE.PICTURE for shape in slide.shapes) for slide in deck.slides]
    return text, pictures


def test_the_installed_cli_builds_every_output_of_every_feature_without_node_modules(installed: dict) -> None:
    _ok(installed["built"])
    project, venv = Path(installed["project"]), Path(installed["venv"])  # type: ignore[arg-type]
    assert (project / "build" / "html" / "01-installed.html").is_file()
    for asset in ("reveal.js", "katex.min.js", "mermaid.min.js", "components/tally-counter.js"):
        assert (project / "build" / "html" / "assets" / asset).is_file(), asset
    code = "from slidegen.media import assets; print(assets.find_node_modules())"
    found = _run([venv / "bin" / "python", "-c", code], cwd=project)
    assert found.stdout.strip() == str(
        venv
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
        / "slidegen"
        / "_vendor"
        / "node_modules"
    )
    version = _run([venv / "bin" / "slidegen", "--version"], cwd=project)
    assert version.returncode == 0 and version.stdout.startswith("slidegen ")

    text, pictures = _pptx_text_and_pictures(project / "build" / "pptx" / "01-installed.pptx")
    assert len(pictures) == SLIDES and "5,376 parameters (Example, 2020)" in text
    assert "Example, A. (2020). An Example." in text  # the references slide, in the wheel's author-date style
    assert pictures[2] >= 1 and pictures[3] >= 1 and pictures[4] >= 1  # the picture, the diagram, the component
    pdf = (project / "build" / "pdf" / "01-installed.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == SLIDES  # a page a slide
    pngs = sorted((project / "build" / "png" / "01-installed").glob("*.png"))
    assert [p.name for p in pngs] == [f"{i:02d}.png" for i in range(1, SLIDES + 1)]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)

    _ok(installed["single"])
    page = (project / "single" / "html" / "01-installed.html").read_text(encoding="utf-8")
    script = base64.b64encode((COMPONENTS / "tally-counter.js").read_bytes()).decode()
    assert 'src="assets/' not in page and f"data:text/javascript;base64,{script[:60]}" in page  # all inlined
    checked = installed["checked"]
    _ok(checked)
    assert checked.stdout.endswith("1 deck(s) checked: 0 error(s), 0 warning(s)\n"), checked.stdout  # type: ignore


def test_init_makes_a_project_that_builds_to_every_format_and_passes_check_strict(installed: dict) -> None:
    _ok(installed["made"])
    talk = Path(installed["talk"])  # type: ignore[arg-type]
    _ok(installed["talk_built"])
    assert "warning" not in installed["talk_built"].stderr  # type: ignore[attr-defined]
    for output in ("html/01-first-talk.html", "html/index.html", "pptx/01-first-talk.pptx", "png/01-first-talk/07.png"):
        assert (talk / "build" / output).is_file(), output
    assert len(re.findall(rb"/Type\s*/Page[^s]", (talk / "build" / "pdf" / "01-first-talk.pdf").read_bytes())) == 7
    text, pictures = _pptx_text_and_pictures(talk / "build" / "pptx" / "01-first-talk.pptx")
    assert len(pictures) == 7 and "0.999 (Kingma and Ba, 2014)" in text and pictures[4] and pictures[5]
    _ok(installed["talk_checked"])
    assert installed["talk_checked"].stdout == "1 deck(s) checked: 0 error(s), 0 warning(s)\n"  # type: ignore
    again = _run([Path(installed["venv"]) / "bin" / "slidegen", "init", "talk"], cwd=talk.parent)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "talk is not empty" in again.stderr


def test_run_needs_torch_only_for_a_project_with_experiments(installed: dict) -> None:
    venv, project = Path(installed["venv"]), Path(installed["project"])  # type: ignore[arg-type]
    listed = _run([venv / "bin" / "slidegen", "run", "--list"], cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("no experiments") and listed.stderr == ""
    lab = Path(installed["tmp"], "lab")  # type: ignore[arg-type]
    (lab / "decks").mkdir(parents=True)
    (lab / "model" / "experiments").mkdir(parents=True)
    (lab / "model" / "experiments" / "ch01_demo.py").write_text("import torch\n", encoding="utf-8")
    done = _run([venv / "bin" / "slidegen", "run"], cwd=lab)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "slidegen[experiments]" in done.stderr and "torch" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.browser
def test_the_installed_build_opens_offline_in_chromium(installed: dict) -> None:
    executable = needs.chromium()
    from playwright.sync_api import sync_playwright

    page_file = Path(installed["project"], "build", "html", "01-installed.html")  # type: ignore[arg-type]
    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        needs.record_problems(page, problems)
        page.goto(page_file.as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        page.evaluate("document.fonts.ready.then(() => true)")
        assert page.evaluate("Reveal.getTotalSlides()") == SLIDES
        assert page.evaluate("document.querySelectorAll('.katex').length") >= 2  # KaTeX from the wheel
        assert page.evaluate("document.querySelector('img') && document.querySelector('img').naturalWidth") > 0
        page.wait_for_function("document.querySelector('.mermaid-diagram svg') !== null")  # Mermaid from the wheel
        assert page.evaluate("!!customElements.get('tally-counter')")
        browser.close()
    assert not problems, problems
