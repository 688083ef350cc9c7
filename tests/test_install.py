"""The package as a pip user gets it: build the sdist and wheel from the repository's files, install the
wheel into a fresh virtual environment (no system site-packages, no node_modules anywhere on the path),
build a fixture deck to HTML and PPTX with its ``slidegen``, and open the HTML in Chromium.

About a minute (building in two isolated environments, installing the dependencies from the package
index); marked ``install``, so ``pytest -m "not install"`` leaves it out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import needs
import pytest

from slidegen.pdf import CHROMIUM_ARGS

pytestmark = pytest.mark.install

REPO = Path(__file__).resolve().parents[1]

DECK = """\
---
title: Installed
chapter: 1
---

# Installed from a wheel

It has {{ demo.params | int }} parameters.

<!-- The number comes from results.md. -->

---

# Math and code

$$
\\mathcal{L} = -\\frac{1}{N}\\sum_i \\log p(x_i)
$$

Inline $e^{i\\pi} + 1 = 0$ too.

```python
loss = model(x).mean()
```

---

# A picture

![a square](img/square.png)
"""

RESULTS = """\
# Results

## demo

| key | value | digits | sd | n | unit | what | source |
|---|---|---|---|---|---|---|---|
| demo.params | 5376 | 4 | | | | parameters | cited: Example 2020 |
"""


def _env() -> dict[str, str]:
    """This environment without anything pointing at the source tree or this venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    return env


def _run(args: list[str | Path], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def _source_copy(target: Path) -> Path:
    """The repository's files (tracked, or new and not ignored) as a fresh clone has them, plus node_modules
    (which a clone gets from `npm ci`)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        needs.missing("the install test copies the repository's files with git")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
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


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Build, install into a fresh venv, build the fixture deck; what each step took."""
    needs.module("build", "pip install build (in the dev extra)")
    tmp = tmp_path_factory.mktemp("install")
    times: dict[str, float] = {}

    start = time.perf_counter()
    source = _source_copy(tmp / "src")
    done = _run([sys.executable, "-m", "build", "--outdir", tmp / "dist", source], cwd=tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    noisy = [line for line in (done.stdout + done.stderr).splitlines() if "deprecat" in line.lower()
             or ("license" in line.lower() and "warn" in line.lower())]
    assert not noisy, noisy  # the packaging metadata warnings are gone
    times["build sdist and wheel"] = time.perf_counter() - start

    start = time.perf_counter()
    venv = tmp / "venv"
    done = _run([sys.executable, "-m", "venv", venv], cwd=tmp)
    assert done.returncode == 0, done.stderr
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    wheel = next((tmp / "dist").glob("slidegen-*.whl"))
    done = _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel], cwd=tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    times["install the wheel"] = time.perf_counter() - start

    project = tmp / "project"
    (project / "decks" / "img").mkdir(parents=True)
    (project / "results").mkdir()
    (project / "decks" / "01-installed.md").write_text(DECK, encoding="utf-8")
    picture = REPO / "tests" / "fixtures" / "decks" / "img" / "loss.png"
    shutil.copyfile(picture, project / "decks" / "img" / "square.png")
    (project / "results" / "results.md").write_text(RESULTS, encoding="utf-8")
    start = time.perf_counter()
    built = _run([venv / "bin" / "slidegen", "build", "--to", "html,pptx"], cwd=project)
    times["slidegen build"] = time.perf_counter() - start
    print("\ninstall test: " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in times.items()))
    return {"tmp": tmp, "venv": venv, "wheel": wheel, "project": project, "built": built}


def test_the_wheel_and_sdist_carry_the_web_assets_and_not_node_modules(installed: dict) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()  # type: ignore[arg-type]
    vendor = "slidegen/_vendor/node_modules/"
    for rel in ("reveal.js/dist/reveal.js", "reveal.js/dist/plugin/notes.js", "katex/dist/katex.min.js",
                "katex/dist/katex.min.css", "katex/dist/fonts/KaTeX_Main-Regular.woff2"):
        assert vendor + rel in names
    if (REPO / "node_modules" / "mermaid" / "dist" / "mermaid.min.js").is_file():
        assert vendor + "mermaid/dist/mermaid.min.js" in names
    assert not [n for n in names if "node_modules" in n and not n.startswith(vendor)]
    assert "slidegen/templates/deck.html.j2" in names
    tops = {name.split("/", 1)[0] for name in names}
    assert not tops & {"model", "figures"}, tops  # only the compiler: the project's code stays the project's
    sdist = next(Path(installed["tmp"], "dist").glob("slidegen-*.tar.gz"))  # type: ignore[arg-type]
    with tarfile.open(sdist) as tar:
        assert any(n.endswith(vendor + "reveal.js/dist/reveal.js") for n in tar.getnames())
    assert "slidegen/_vendor" not in subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True,
                                                    text=True).stdout  # never committed


def test_the_installed_cli_builds_html_and_pptx_without_node_modules(installed: dict) -> None:
    built = installed["built"]
    assert built.returncode == 0, built.stderr  # type: ignore[attr-defined]
    project, venv = Path(installed["project"]), Path(installed["venv"])  # type: ignore[arg-type]
    assert (project / "build" / "html" / "01-installed.html").is_file()
    assert (project / "build" / "html" / "assets" / "reveal.js").is_file()
    assert (project / "build" / "pptx" / "01-installed.pptx").is_file()
    found = _run([venv / "bin" / "python", "-c", "from slidegen import assets; print(assets.find_node_modules())"],
                 cwd=project)
    assert found.stdout.strip() == str(venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
                                       / "site-packages" / "slidegen" / "_vendor" / "node_modules")
    version = _run([venv / "bin" / "slidegen", "--version"], cwd=project)
    assert version.returncode == 0 and version.stdout.startswith("slidegen ")

    from pptx import Presentation

    deck = Presentation(str(project / "build" / "pptx" / "01-installed.pptx"))
    text = " ".join(shape.text_frame.text for slide in deck.slides for shape in slide.shapes
                    if shape.has_text_frame)
    assert len(deck.slides) == 3 and "5,376 parameters" in text


def test_run_without_the_experiments_extra_says_what_to_install_in_one_line(installed: dict) -> None:
    venv, project = Path(installed["venv"]), Path(installed["project"])  # type: ignore[arg-type]
    done = _run([venv / "bin" / "slidegen", "run"], cwd=project)
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
        assert page.evaluate("Reveal.getTotalSlides()") == 3
        assert page.evaluate("document.querySelectorAll('.katex').length") >= 2  # KaTeX from the wheel
        assert page.evaluate("document.querySelector('img') && document.querySelector('img').naturalWidth") > 0
        browser.close()
    assert not problems, problems
