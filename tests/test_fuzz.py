"""Fuzzing: seeded odd and malformed decks and results files through ``inspect``, ``check`` and
``build --to html,pptx``, in-process. Anything but success or located errors fails: an exit
other than 0 or 1, a traceback or internal error, an output over 50 MB, a command over 10 s.

``make test`` runs FUZZ_CASES (default 200) cases from FUZZ_SEED (default 12); ``make fuzz``
runs 10,000. The summary (clean, located, the messages seen most) prints with ``-s``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import re
import shutil
import signal
import time
from pathlib import Path

import fuzz_decks
import pytest

from slidegen.cli.main import main

CASES = int(os.environ.get("FUZZ_CASES", "200"))
SEED = int(os.environ.get("FUZZ_SEED", "12"))
LIMIT_SECONDS = 10.0
LIMIT_BYTES = 50 * 2**20
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82"
)
LOCATED = re.compile(r"^\S.*?:\d+:\d+: (error|warning): (.*)$")


class TooSlow(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` in slidegen swallows it."""


def _alarm(signum: int, frame: object) -> None:
    raise TooSlow


def run(args: list[str]) -> tuple[int | str, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, LIMIT_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code: int | str = main(args)
    except TooSlow:
        code = "timeout"
    except BaseException as error:  # noqa: BLE001 (anything main lets out is a failure to report)
        code = f"raised {type(error).__name__}: {error}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def paths_to_nothing(folder: Path) -> None:
    """The files of fuzz_decks.BAD_PATHS: ``loop.*``, symbolic links to themselves, and ``locked.*``, of mode 000
    (readable all the same when the tests run as root)."""
    folder.mkdir()
    for ext in ("png", "md", "py"):
        (folder / f"loop.{ext}").symlink_to(f"loop.{ext}")
        locked = folder / f"locked.{ext}"
        locked.write_bytes(PNG if ext == "png" else b"# Locked\n")
        locked.chmod(0)


def warm_up(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build one deck with code, display math and a picture, untimed: the first build imports
    matplotlib, Pygments' lexers and python-pptx, seconds that are no case's fault."""
    (root / "decks").mkdir(parents=True)
    (root / "decks" / "pic.png").write_bytes(PNG)
    (root / "decks" / "01-w.md").write_text(
        "# W\n\n```py\nx = 1\n```\n\n$$\n\\frac{a}{b}\n$$\n\n![p](pic.png)\n", encoding="utf-8"
    )
    monkeypatch.chdir(root)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["build", "--to", "html,pptx"]) == 0


@pytest.mark.slow
def test_fuzzed_decks_give_success_or_located_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failures: list[str] = []
    outcomes: collections.Counter[str] = collections.Counter()
    messages: collections.Counter[str] = collections.Counter()
    warm_up(tmp_path / "warm", monkeypatch)
    started = time.monotonic()
    slowest: list[tuple[float, int, str]] = []
    for seed in range(SEED, SEED + CASES):
        mild = seed % 5 < 2  # two cases in five hold only valid constructs, so the writers see them
        deck, results, other = fuzz_decks.mild_case(seed) if mild else fuzz_decks.case(seed)
        root = tmp_path / f"case{seed}"
        (root / "decks").mkdir(parents=True)
        (root / "decks" / "01-x.md").write_bytes(deck)
        (root / "decks" / "02-y.md").write_bytes(other)
        (root / "decks" / "pic.png").write_bytes(PNG)
        (root / "decks" / "secret.png").write_bytes(b"not a picture\n")
        paths_to_nothing(root / "decks" / "parts")
        if results is not None:
            (root / "results").mkdir()
            (root / "results" / "results.md").write_bytes(results)
        monkeypatch.chdir(root)
        worst = 0
        for args in (["inspect", "decks/01-x.md"], ["check"], ["build", "--to", "html,pptx"]):
            code, out, err, seconds = run(args)
            slowest.append((seconds, seed, args[0]))
            problem = None
            if code not in (0, 1):
                problem = f"exit {code}"
            elif "Traceback" in err or "internal error" in err:
                problem = "traceback"
            elif seconds > LIMIT_SECONDS:
                problem = f"took {seconds:.1f} s"
            elif len(out) + len(err) > LIMIT_BYTES or size(root / "build") > LIMIT_BYTES:
                problem = "output over 50 MB"
            if problem:
                failures.append(f"seed {seed}: {' '.join(args)}: {problem}: {err.strip()[-800:]}")
                print(f"\nFAILED {failures[-1]}", flush=True)
            worst = max(worst, 0 if code == 0 else 1)
            for line in err.splitlines():
                found = LOCATED.match(line)
                if found:
                    messages[re.sub(r"'[^']*'", "'…'", found.group(2))[:90]] += 1
        outcomes[("mild " if mild else "wild ") + ("clean" if worst == 0 else "located errors")] += 1
        shutil.rmtree(root, ignore_errors=True)
        if (seed - SEED + 1) % 500 == 0:
            print(f"\nfuzz: {seed - SEED + 1} cases: {dict(outcomes)}, {len(failures)} failure(s)", flush=True)
    elapsed = time.monotonic() - started
    print(f"\nfuzz: {CASES} cases from seed {SEED} in {elapsed:.0f} s: {dict(outcomes)}, {len(failures)} failure(s)")
    print("  slowest:", ", ".join(f"seed {seed} {what} {t:.1f} s" for t, seed, what in sorted(slowest)[-5:]))
    for message, count in messages.most_common(15):
        print(f"  {count:6d}  {message}")
    assert not failures, f"{len(failures)} of {CASES} cases failed:\n" + "\n".join(failures[:20])
