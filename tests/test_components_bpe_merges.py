"""components/bpe-merges.js in a blank Chromium page: its merges (in order, with their
counts) and its segmentations equal model/bpe.py's, ties included; its controls step."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path

import needs
import pytest

from model.bpe import chunks, encode, merge_pair, train_bpe
from slidegen.write.pdf import CHROMIUM_ARGS

pytestmark = pytest.mark.browser

SCRIPT = Path(__file__).parents[1] / "components" / "bpe-merges.js"
STYLE = SCRIPT.with_suffix(".css")

TEXTS = [
    "To be, or not to be: that is the question:\nWhether 'tis nobler in the mind to suffer",
    "low low low low low lower lower newest newest newest newest newest newest widest widest widest",
    "abab abab ba ba",  # ties: ("a", "b") and ("b", "a") both count 4 at first
    "aaaa aaa aa a",  # overlapping pairs: "aaaa" holds ("a", "a") three times
    "zy yz zy yz",  # a tie that string order breaks, not order of appearance
    "  Hello,  world!!\n\n\tcafé naïve_x 3.14 ...",  # whitespace runs, punctuation, accents, digits
    "",
    "x",
]


def counts_when_chosen(text: str, merges: list[tuple[str, str]]) -> list[int]:
    """Each merge's count when train_bpe chose it (recounted over the chunks)."""
    freq = Counter(chunks(text))
    words = {w: list(w) for w in freq}
    out = []
    for a, b in merges:
        out.append(sum(f * sum(p == (a, b) for p in pairwise(words[w])) for w, f in freq.items()))
        words = {w: merge_pair(s, a, b) for w, s in words.items()}
    return out


@pytest.fixture(scope="module")
def page():
    executable = needs.chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_content("<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>")
        page.add_style_tag(path=str(STYLE))
        page.add_script_tag(path=str(SCRIPT))
        yield page
        assert not errors, errors
        browser.close()


@pytest.mark.parametrize("text", TEXTS)
def test_merges_and_counts_equal_bpe_py(page, text):
    want = train_bpe(text, 40)
    got = page.evaluate("([t, n]) => customElements.get('bpe-merges').train(t, n)", [text, 40])
    assert [(m["a"], m["b"]) for m in got] == want
    assert [m["count"] for m in got] == counts_when_chosen(text, want)


@pytest.mark.parametrize("text", TEXTS)
def test_segmentations_equal_bpe_py_at_every_step(page, text):
    merges = train_bpe(text, 25)
    got = page.evaluate(
        """([t, merges]) => { const E = customElements.get('bpe-merges');
             return merges.map((_, k) => E.encode(t, merges.slice(0, k + 1))).concat([E.encode(t, [])]); }""",
        [text, [list(m) for m in merges]],
    )
    want = [encode(text, merges[: k + 1]) for k in range(len(merges))] + [encode(text, [])]
    assert got == want


def test_chunks_equal_bpe_py(page):
    text = TEXTS[5] + " x\x1cy\u00a0z\ufeffw"
    assert page.evaluate("t => customElements.get('bpe-merges').chunks(t)", text) == chunks(text)


def test_on_the_book_it_learns_the_same_first_merges(page):
    from model.data import load_text

    text = load_text()[:20000]
    got = page.evaluate("([t, n]) => customElements.get('bpe-merges').train(t, n)", [text, 30])
    assert [(m["a"], m["b"]) for m in got] == train_bpe(text, 30)


def _mount(page, attrs: str) -> None:
    page.evaluate("html => { document.body.innerHTML = html; }", f"<bpe-merges {attrs}></bpe-merges>")


def test_the_controls_and_keys_step_and_stop_propagation(page):
    text = TEXTS[1]
    _mount(page, f'text="{text}" merges="5" alt="BPE"')
    merges = train_bpe(text, 5)
    tokens = lambda: page.eval_on_selector_all("bpe-merges .bpe-tok", "els => els.map(e => e.textContent)")  # noqa: E731
    shown = lambda toks: [t.replace(" ", "\u00b7") for t in toks]  # noqa: E731
    assert tokens() == shown(encode(text, []))  # rendered at once, no merge yet
    page.click("bpe-merges .bpe-btn:has-text('step')")
    page.click("bpe-merges .bpe-btn:has-text('step')")
    assert tokens() == shown(encode(text, merges[:2]))
    status = page.text_content("bpe-merges .bpe-status")
    assert "merge 2 of 5" in status and str(counts_when_chosen(text, merges)[1]) in status
    page.evaluate("() => { window.leaked = 0; document.addEventListener('keydown', () => window.leaked++); }")
    page.focus("bpe-merges .bpe-root")
    page.keyboard.press("ArrowLeft")
    assert tokens() == shown(encode(text, merges[:1]))
    page.keyboard.press("End")
    assert tokens() == shown(encode(text, merges))
    page.focus("bpe-merges .bpe-input")
    page.keyboard.type("ab")
    assert page.evaluate("() => window.leaked") == 0  # reveal.js never sees these keys


def test_print_state_and_attribute_changes(page):
    text = TEXTS[0]
    _mount(page, f'text="{text}" merges="12" print-state="step=7" alt="BPE"')
    merges = train_bpe(text, 12)
    got = page.eval_on_selector_all("bpe-merges .bpe-tok", "els => els.map(e => e.textContent)")
    assert got == [t.replace(" ", "\u00b7").replace("\n", "\u21b5") for t in encode(text, merges[:7])]
    assert page.eval_on_selector_all("bpe-merges .bpe-merge", "els => els.length") == 6  # the latest six
    assert page.eval_on_selector("bpe-merges .bpe-list", "e => e.start") == 2
    last = page.text_content("bpe-merges .bpe-current")
    assert last.startswith(f"{merges[6][0].replace(' ', chr(183))} + {merges[6][1].replace(' ', chr(183))}")
    page.evaluate("() => document.querySelector('bpe-merges').setAttribute('text', 'abab abab ba ba')")
    got = page.eval_on_selector_all("bpe-merges .bpe-tok", "els => els.map(e => e.textContent)")
    merges = train_bpe("abab abab ba ba", 12)
    assert got == [t.replace(" ", "\u00b7") for t in encode("abab abab ba ba", merges[: min(7, len(merges))])]
