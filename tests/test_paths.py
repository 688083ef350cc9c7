"""Issue 29: a path no file system takes, in a ``src:`` import, a ``<<<`` snippet or a picture, is an error at the
line that wrote it (exit 1), never an internal error (exit 70); one function (slidegen/paths.py) checks all three."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from slidegen import paths
from slidegen.cli.main import main
from slidegen.errors import SlidegenError

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82"
)

#: Each kind of reference: the noun its messages use, how a deck writes it around a path, the place (line:col)
#: of that reference in the deck, the file's extension and its bytes.
KINDS = {
    "src": ("src:", "# A\n\n---\nsrc: {}\n---\n", "4:6", ".md", b"# Part\n"),
    "snippet": ("snippet file", "# S\n\n<<< {}\n", "3:1", ".py", b"x = 1\n"),
    "image": ("image", "# I\n\n![p]({})\n", "3:1", ".png", PNG),
}
LOOP = "cannot be used: its symbolic links loop (Too many levels of symbolic links); point them at a file"
LONG = "cannot be used: the file system refuses a name this long (File name too long); shorten the path"
LOCKED = "cannot be read: Permission denied; make the file (and its folders) readable, or name another file"


def run(root: Path, kind: str, written: str) -> list[str]:
    """Write the deck that names ``written`` as a ``kind`` reference; check and build it; the error lines of
    both (each must exit 1)."""
    (root / "decks" / "01-x.md").write_text(KINDS[kind][1].format(written), encoding="utf-8")
    lines = []
    for args in (["check"], ["build", "--to", "html,pptx"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(args)
        assert code == 1, (args, code, err.getvalue()[-2000:])
        assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue()
        lines.append([line for line in err.getvalue().splitlines() if ": error: " in line])
    return [line for found in lines for line in found]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "decks" / "parts").mkdir(parents=True)
    return tmp_path.resolve()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_4000_character_path_is_a_located_error(root: Path, kind: str) -> None:
    noun, _, where, ext, _ = KINDS[kind]
    written = "./parts/" + "a" * (4000 - len("./parts/") - len(ext)) + ext
    assert len(written) == 4000
    shown = "./parts/" + "a" * 72 + "..." + "a" * (30 - len(ext)) + ext  # the two ends of it
    expected = f"decks/01-x.md:{where}: error: {noun} '{shown}' {LONG}"
    assert run(root, kind, written) == [expected, expected]  # check says what build stops on


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_path_of_many_short_names_over_the_systems_limit_is_a_located_error(root: Path, kind: str) -> None:
    noun, _, where, ext, _ = KINDS[kind]
    written = "./parts/" + "a/" * 2100 + "x" + ext  # no name too long, the whole path too long
    shown = written[:80] + "..." + written[-30:]
    assert run(root, kind, written) == [f"decks/01-x.md:{where}: error: {noun} '{shown}' {LONG}"] * 2


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_symlink_loop_is_a_located_error(root: Path, kind: str) -> None:
    noun, _, where, ext, _ = KINDS[kind]
    (root / "decks" / "parts" / f"loop{ext}").symlink_to(f"loop{ext}")
    written = f"./parts/loop{ext}"
    assert run(root, kind, written) == [f"decks/01-x.md:{where}: error: {noun} '{written}' {LOOP}"] * 2


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_file_that_cannot_be_read_is_a_located_error(root: Path, kind: str) -> None:
    noun, _, where, ext, data = KINDS[kind]
    locked = root / "decks" / "parts" / f"locked{ext}"
    locked.write_bytes(data)
    locked.chmod(0)
    if os.geteuid() == 0:
        pytest.skip("root reads a file of mode 000")
    written = f"./parts/locked{ext}"
    assert run(root, kind, written) == [f"decks/01-x.md:{where}: error: {noun} '{written}' {LOCKED}"] * 2


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_readable_file_of_each_kind_builds(root: Path, kind: str) -> None:
    _, deck, _, ext, data = KINDS[kind]
    (root / "decks" / "parts" / f"fine{ext}").write_bytes(data)
    (root / "decks" / "01-x.md").write_text(deck.format(f"./parts/fine{ext}"), encoding="utf-8")
    assert main(["build", "--to", "html"]) == 0


def test_every_kind_refuses_a_remote_file_and_one_outside_the_project_in_the_same_words(root: Path) -> None:
    deck = root / "decks" / "01-x.md"
    (root.parent / "outside.png").write_bytes(PNG)
    for kind in (paths.IMPORT, paths.SNIPPET, paths.PICTURE):
        with pytest.raises(SlidegenError) as remote:
            paths.resolve(kind, paths.Written("https://example.org/x.png", deck, 7, 3), deck, root)
        assert str(remote.value) == (
            f"decks/01-x.md:7:3: error: {kind.noun} 'https://example.org/x.png' is "
            "remote: decks work offline, so save the file beside the deck"
        )
        with pytest.raises(SlidegenError) as outside:
            paths.resolve(kind, paths.Written("../../outside.png", deck, 7, 3), deck, root)
        assert outside.value.diagnostic.message == (
            f"{kind.noun} '../../outside.png' resolves to {root.parent / 'outside.png'}, outside the project "
            f"({root}); a deck may only use files inside it"
        )


def test_a_nul_in_a_path_is_a_located_error(root: Path) -> None:
    deck = root / "decks" / "01-x.md"  # a deck's text cannot hold a NUL (the parser replaces it); a caller's can
    with pytest.raises(SlidegenError) as caught:
        paths.resolve(paths.PICTURE, paths.Written("a\x00b.png", deck, 2, 1), deck, root)
    assert (
        caught.value.diagnostic.message == "image 'a\x00b.png' cannot be used: a path cannot hold a NUL "
        "character; remove it"
    )


def test_prefixes_name_the_project_and_the_decks_folder(root: Path) -> None:
    (root / "model").mkdir()
    (root / "model" / "x.py").write_text("x = 1\n", encoding="utf-8")
    (root / "decks" / "p.md").write_text("# P\n", encoding="utf-8")
    part = root / "decks" / "parts" / "part.md"
    deck = root / "decks" / "01-x.md"
    assert (
        paths.resolve(paths.SNIPPET, paths.Written("@/model/x.py", part, 1, 1), part, root)
        == (root / "model" / "x.py").resolve()
    )
    # an import's / is the deck's folder, any other path is relative to the file that imports
    assert paths.resolve(paths.IMPORT, paths.Written("/p.md", part, 1, 1), deck, root) == (root / "decks" / "p.md")
    assert paths.resolve(paths.IMPORT, paths.Written("../p.md", part, 1, 1), deck, root) == (root / "decks" / "p.md")


def test_a_pictures_raster_twin_is_checked_as_the_picture_is(root: Path, tmp_path: Path) -> None:
    (root / "decks" / "parts" / "d.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'></svg>", encoding="utf-8")
    (tmp_path.parent / "secret.png").write_bytes(PNG)
    twin = root / "decks" / "parts" / "d.png"
    twin.symlink_to(tmp_path.parent / "secret.png")  # PowerPoint's copy of the drawing, a link out of the project
    assert (
        run(root, "image", "parts/d.svg")
        == [
            f"decks/01-x.md:3:1: error: image '{twin}' resolves to "
            f"{(tmp_path.parent / 'secret.png').resolve()}, outside "
            f"the project ({root}); a deck may only use files inside it"
        ]
        * 2
    )


@pytest.mark.parametrize("target", ["02-loop.md", "missing.md"])
def test_a_deck_file_no_build_can_read_is_its_error_and_the_others_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "01-a.md").write_text("# A\n\nfine\n", encoding="utf-8")
    (tmp_path / "decks" / "02-loop.md").symlink_to(target)  # a link to itself, or to nothing
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # built, then nothing to write: the error all the same
        assert main(["build", "--to", "html"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("decks/02-loop.md:1:1: error: cannot read the deck: ")
        assert ("symbolic links loop" in err) == (target == "02-loop.md")
    assert (tmp_path / "build" / "html" / "01-a.html").is_file()
    assert main(["check"]) == 1
    assert "2 deck(s) checked: 1 error(s)" in capsys.readouterr().out
