"""`slidegen serve`: loopback by default, live script only when serving, rebuild + reload on save,
error pages instead of dying, Ctrl-C stops cleanly. Small temporary projects, ephemeral ports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import needs
import pytest
from sse import Events

from slidegen import serve as serve_module
from slidegen import theme
from slidegen.cli.main import main
from slidegen.errors import Diagnostic, UsageError
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.record.results import Result, Results
from slidegen.serve import (
    EventHub,
    Preview,
    changed_files,
    check_host,
    error_page,
    inject_live_script,
    is_loopback,
    snapshot,
)
from slidegen.serve.address import browser_url
from slidegen.write import pdf

DECK = """\
---
title: Served deck
chapter: 1
---

# Served deck

The loss is {{ ch01.loss }}.

---

# Second slide

Original text.
"""

OTHER = "---\ntitle: Another deck\n---\n\n# Another deck\n\nLoss {{ ch01.loss }} here too.\n"


def write_results(root: Path, value: float) -> None:
    Results([Result("ch01.loss", value, digits=4, what="a loss", source="run ch01.default 0123456789ab")]).write(
        root / "results" / "results.md"
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    (tmp_path / "decks").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "decks" / "01-served.md").write_text(DECK, encoding="utf-8")
    (tmp_path / "decks" / "02-other.md").write_text(OTHER, encoding="utf-8")
    write_results(tmp_path, 2.3456)
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.headers["Cache-Control"] == "no-store"
        return response.read().decode("utf-8")


@pytest.fixture
def preview(project: Project):
    with Preview(project, port=0, log=open(os.devnull, "w")) as running:
        running.watch_in_background()
        yield running


# --------------------------------------------------------------------------- binding


def test_binds_127_0_0_1_by_default_and_serves_pages_with_the_live_script(preview: Preview) -> None:
    assert preview.address[0] == "127.0.0.1"
    assert preview.url == f"http://127.0.0.1:{preview.port}/"
    index = get(preview.url)
    assert "01-served.html" in index and "Another deck" in index and "/__events" in index
    page = get(preview.url + "01-served.html")
    assert "The loss is" in page and "2.346" in page
    assert page.index("/__events") < page.rindex("</body>")
    assert get(preview.url + "assets/reveal.js")  # assets beside the pages
    assert not (preview.project.root / "build").exists()  # a temporary folder, not build/


def test_normal_builds_carry_no_live_script(project: Project, tmp_path: Path) -> None:
    build(project, None, BuildOptions(formats=("html",), out=tmp_path / "out"))
    for page in (tmp_path / "out" / "html").glob("*.html"):
        assert "__events" not in page.read_text(encoding="utf-8")


def test_refuses_a_non_loopback_address_unless_asked_for_explicitly(project: Project) -> None:
    for host in ("0.0.0.0", "192.0.2.7", "::"):
        with pytest.raises(UsageError, match="--host"):
            Preview(project, host=host, port=0)
    assert check_host("0.0.0.0", allow_remote=True) == "0.0.0.0"
    assert Preview(project, host="0.0.0.0", port=0, allow_remote=True).host == "0.0.0.0"  # not started
    for host in ("127.0.0.1", "127.8.9.10", "::1", "localhost"):
        assert is_loopback(host), host
        assert check_host(host) == host
    for host in ("0.0.0.0", "::", "10.1.2.3"):
        assert not is_loopback(host), host


def test_cli_passes_other_addresses_only_from_an_explicit_host(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    monkeypatch.setattr(serve_module, "serve", lambda project, **kw: calls.append(kw) or 0)
    assert main(["serve"]) == 0
    assert main(["serve", "--port", "8123", "--host", "0.0.0.0"]) == 0
    assert calls == [
        {"host": "127.0.0.1", "port": 8000, "allow_remote": False},
        {"host": "0.0.0.0", "port": 8123, "allow_remote": True},
    ]
    with pytest.raises(SystemExit):
        main(["serve", "--port", "70000"])


# --------------------------------------------------------------------------- rebuild and reload


def test_editing_a_deck_rebuilds_that_deck_and_sends_a_reload(preview: Preview, project: Project) -> None:
    events = Events(preview.port)
    try:
        deck = project.decks_dir / "01-served.md"
        deck.write_text(DECK.replace("Original text.", "Edited while serving."), encoding="utf-8")
        data, _ = events.wait_for("01-served.html")
        assert "02-other.html" not in data["pages"] and "index.html" in data["pages"]
        assert "Edited while serving." in get(preview.url + "01-served.html")
    finally:
        events.close()


def test_changing_results_rebuilds_every_deck(preview: Preview, project: Project) -> None:
    events = Events(preview.port)
    try:
        write_results(project.root, 9.8765)
        data, _ = events.wait_for("02-other.html")
        assert {"01-served.html", "02-other.html", "index.html"} <= set(data["pages"])
        assert "9.877" in get(preview.url + "01-served.html")
        assert "9.877" in get(preview.url + "02-other.html")
    finally:
        events.close()


def test_a_broken_deck_shows_its_error_and_the_server_keeps_running(preview: Preview, project: Project) -> None:
    events = Events(preview.port)
    deck = project.decks_dir / "01-served.md"
    try:
        broken = DECK.replace("---\n\n# Second slide", "---\nlayout: <b>odd</b>\n---\n\n# Second slide")
        deck.write_text(broken, encoding="utf-8")
        events.wait_for("01-served.html")
        page = get(preview.url + "01-served.html")
        assert "decks/01-served.md:11:9: error: unknown layout" in page
        assert "&#39;&lt;b&gt;odd&lt;/b&gt;&#39;" in page and "<b>odd</b>" not in page  # escaped
        assert "/__events" in page  # the error page reloads too
        assert "Another deck" in get(preview.url + "02-other.html")  # the other deck is untouched
        deck.write_text(DECK.replace("Original text.", "Fixed."), encoding="utf-8")
        events.wait_for("01-served.html")
        assert "Fixed." in get(preview.url + "01-served.html")
        assert not preview.errors
    finally:
        events.close()


def test_ctrl_c_stops_cleanly(project: Project) -> None:
    """The real command in a child process: serve, answer, then SIGINT ends it with exit 0."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(
        [sys.executable, "-m", "slidegen", "serve", "--port", "0"],
        cwd=project.root,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        line = ""
        deadline = time.monotonic() + 30
        while "serving" not in line and time.monotonic() < deadline:
            line = child.stderr.readline()
            if not line and child.poll() is not None:
                break
        assert "serving http://127.0.0.1:" in line, line
        url = line.split()[1]
        temp = Path(line.split("(from ")[1].split(")")[0])
        assert temp.is_dir()
        assert "Served deck" in get(url + "01-served.html")
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=10) == 0
        assert "stopped" in child.stderr.read()
        assert not temp.exists()  # the temporary build is removed
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.browser
def test_the_open_page_reloads_at_the_same_slide(preview: Preview, project: Project) -> None:
    """In Chromium: the injected script hears the reload and reveal.js comes back on slide 2 (a slide is
    added too: a text-only edit is patched in place instead, tests/test_serve_patch.py)."""
    chromium = needs.chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=list(pdf.CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(preview.url + "01-served.html#/1")
            page.wait_for_function("window.Reveal && Reveal.isReady() && window.__slidegenLive === true")
            deadline = time.monotonic() + 5
            while preview.hub.listeners == 0 and time.monotonic() < deadline:
                time.sleep(0.05)  # the page's EventSource is connected
            page.evaluate("window.__beforeReload = true")
            deck = project.decks_dir / "01-served.md"
            deck.write_text(
                DECK.replace("Original text.", "Seen after the reload.") + "\n---\n\n# Added\n", encoding="utf-8"
            )
            page.wait_for_function(
                "window.__beforeReload === undefined && window.Reveal && Reveal.isReady()", timeout=8000
            )
            assert page.evaluate("Reveal.getIndices().h") == 1
            assert "Seen after the reload." in page.evaluate("Reveal.getCurrentSlide().innerText")
        finally:
            browser.close()


# --------------------------------------------------------------------------- the parts, one by one


def test_the_error_page_is_the_template_in_the_themes_colours(project: Project) -> None:
    page = error_page(
        project.decks_dir / "01-served.md",
        [Diagnostic("decks/01-served.md", 3, 4, "unknown layout '<b>odd</b>'"), "plain & string"],
    )
    assert page.startswith("<!doctype html>\n") and page.endswith("</html>\n")
    assert "<title>Error in decks/01-served.md</title>" in page
    assert "<h1>decks/01-served.md does not build</h1>" in page
    style = page[page.index("<style>") : page.index("</style>")]
    assert (
        f"body {{ margin: 0; background: {theme.BACKGROUND}; color: {theme.TEXT}; font-family: {theme.SANS_CSS};"
        in style
    )  # the font list's quotes are not escaped inside <style>
    assert f"font-family: {theme.MONO_CSS};" in style and f"background: {theme.CODE_BACKGROUND};" in style
    assert f"p {{ color: {theme.MUTED}; }}" in style and f"a {{ color: {theme.ACCENT}; }}" in style
    assert (
        '<ul class="problems">\n<li><code>decks/01-served.md:3:4: error: unknown layout '
        "&#39;&lt;b&gt;odd&lt;/b&gt;&#39;</code></li>\n<li><code>plain &amp; string</code></li>\n</ul>" in page
    )
    assert '<a href="index.html">All decks</a>' in page


def test_the_live_script_goes_before_the_last_body_end() -> None:
    script = serve_module.LIVE_SCRIPT.encode()
    assert inject_live_script(b"<body>a</body> x </BODY>") == b"<body>a</body> x " + script + b"</BODY>"
    assert inject_live_script(b"<p>no body</p>") == b"<p>no body</p>" + script
    assert b'new EventSource("' + serve_module.EVENTS_PATH.encode() + b'")' in script


def test_the_event_hub_fans_out_and_closes() -> None:
    hub = EventHub()
    first, second = hub.subscribe(), hub.subscribe()
    assert hub.listeners == 2
    hub.publish("reload", {"pages": ["01-x.html"]})
    assert first.get_nowait() == second.get_nowait() == ("reload", '{"pages": ["01-x.html"]}')
    hub.unsubscribe(second)
    hub.close()
    assert first.get_nowait() is None and second.empty() and hub.listeners == 1
    assert hub.subscribe().get_nowait() is None  # a stream opened after close ends at once


def test_snapshots_see_added_changed_and_removed_files_but_not_editor_files(tmp_path: Path) -> None:
    decks = tmp_path / "decks"
    (decks / ".git").mkdir(parents=True)
    (decks / "01-a.md").write_text("a", encoding="utf-8")
    (decks / "02-b.md").write_text("b", encoding="utf-8")
    for name in (".01-a.md.swp", "01-a.md~", "#01-a.md#", "x.tmp", ".git/index"):
        (decks / name).write_text("editor", encoding="utf-8")
    before = snapshot([decks, tmp_path / "missing"])
    assert set(before) == {decks / "01-a.md", decks / "02-b.md"}
    (decks / "01-a.md").write_text("a, edited", encoding="utf-8")
    (decks / "02-b.md").unlink()
    (decks / "03-c.md").write_text("c", encoding="utf-8")
    (decks / "01-a.md~").write_text("editor again", encoding="utf-8")
    assert changed_files(before, snapshot([decks])) == {decks / "01-a.md", decks / "02-b.md", decks / "03-c.md"}


def test_the_url_of_a_wildcard_address_opens_on_this_machine() -> None:
    assert browser_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert browser_url("0.0.0.0", 8001) == "http://127.0.0.1:8001/"
    assert browser_url("::", 8002) == "http://[::1]:8002/"
    assert browser_url("::1", 8003) == "http://[::1]:8003/"
    assert browser_url("[::1]", 8004) == "http://[::1]:8004/"


def test_snapshots_watch_single_files_such_as_the_bibliography(tmp_path: Path) -> None:
    bib = tmp_path / "references.bib"
    bib.write_text("@book{a, title={A}}\n", encoding="utf-8")
    before = snapshot([bib, tmp_path / "styles"])
    assert set(before) == {bib}
    bib.write_text("@book{a, title={A, second edition}}\n", encoding="utf-8")
    assert changed_files(before, snapshot([bib])) == {bib}


def test_serve_watches_components_and_the_code_snippets_import(preview: Preview) -> None:
    root = preview.project.root
    watched = preview.watched()
    assert root / "components" in watched
    assert root / "model" in watched  # <<< @/model/... snippets and the experiments' code


# --------------------------------------------------------------------------- file-system events


def test_an_edit_is_seen_through_file_system_events_and_rebuilds_only_that_deck(project: Project) -> None:
    """Polling is set to once an hour: the reload can only come from an event."""
    with Preview(project, port=0, log=open(os.devnull, "w"), interval=3600) as running:
        running.watch_in_background()
        assert running.watching.wait(10) and running.watcher == "events"
        events = Events(running.port)
        try:
            before = (running.html_dir / "02-other.html").stat().st_mtime_ns
            deck = project.decks_dir / "01-served.md"
            deck.write_text(DECK.replace("Original text.", "Seen through an event."), encoding="utf-8")
            data, _ = events.wait_for("01-served.html")
            assert "02-other.html" not in data["pages"]
            assert "Seen through an event." in get(running.url + "01-served.html")
            assert (running.html_dir / "02-other.html").stat().st_mtime_ns == before  # left alone
            assert not (running.out / "pptx").exists()  # HTML only
            page = (running.html_dir / "01-served.html").stat().st_mtime_ns
            (project.root / "references.bib").write_text("@book{a, title={A}}\n", encoding="utf-8")  # a single file
            time.sleep(1.0)
            assert (running.html_dir / "01-served.html").stat().st_mtime_ns == page  # no deck cites a work
            assert running.rebuild(None) == []  # nothing to reload
        finally:
            events.close()


def test_without_events_the_preview_polls(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("slidegen.serve.preview.events_available", lambda: False)
    with Preview(project, port=0, log=open(os.devnull, "w"), interval=0.05) as running:
        running.watch_in_background()
        assert running.watching.wait(10) and running.watcher == "polling"
        events = Events(running.port)
        try:
            (project.decks_dir / "02-other.md").write_text(OTHER.replace("here too", "polled"), encoding="utf-8")
            data, _ = events.wait_for("02-other.html")
            assert "01-served.html" not in data["pages"]
        finally:
            events.close()
