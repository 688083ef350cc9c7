"""Build many decks on every core: worker processes ("spawn") and the main process share the decks.

Each deck is written by exactly the code a serial build runs (:func:`slidegen.pipeline.decks.build_decks`)
into its own staging folder, so the outputs are the same bytes whichever process wrote them.
Decks go out in small groups: the workers take them from the front, the main process (which
is ready first, the workers still starting) from the back, until none is left.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen.errors import display_path
from slidegen.project import Project

if TYPE_CHECKING:
    from slidegen.pipeline.bound import BoundDecks
    from slidegen.pipeline.decks import BuildSettings, DeckBuilt

#: Fewer decks than this are written by the main process alone: a worker takes about a second to start
#: (Python and the writers' imports). benchmarks/build_speed.py on 2 cores: a warm build of 14 decks
#: took 1.93 s alone and 2.67 s with two processes, of 56 decks 8.59 s and 6.31 s; the lines cross
#: near 24 decks.
MIN_DECKS = 24
#: Groups per process: enough that no process waits long for the last one, few enough that each
#: group's shared set-up (results, bibliography, components) stays small beside its decks.
GROUPS_PER_JOB = 4


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worth_it(decks: int, jobs: int) -> bool:
    """Whether writing ``decks`` decks with ``jobs`` processes beats one."""
    return jobs > 1 and decks >= MIN_DECKS


def groups(paths: Sequence[Path], jobs: int) -> list[list[Path]]:
    """``paths`` cut into consecutive groups, about :data:`GROUPS_PER_JOB` per process."""
    size = max(1, math.ceil(len(paths) / (jobs * GROUPS_PER_JOB)))
    return [list(paths[i : i + size]) for i in range(0, len(paths), size)]


def _work(
    project: Project, paths: list[Path], formats: dict[Path, tuple[str, ...]], settings: BuildSettings
) -> list[DeckBuilt]:
    """One group, in a worker: parse, bind and write its decks (HTML and PowerPoint need no deck index)."""
    from slidegen.deck.nodes import DeckIndex
    from slidegen.pipeline.bound import BoundDecks
    from slidegen.pipeline.decks import build_decks

    return build_decks(project, paths, formats, settings, BoundDecks({}, {}, DeckIndex()), DeckIndex())


def build_parallel(
    project: Project,
    paths: Sequence[Path],
    formats: dict[Path, tuple[str, ...]],
    settings: BuildSettings,
    bound: BoundDecks,
    jobs: int,
    progress: Callable[[str, str], None] | None = None,
) -> list[DeckBuilt]:
    """Write ``paths`` with ``jobs`` processes (the main one and ``jobs - 1`` workers); results in ``paths`` order."""
    import concurrent.futures as futures  # here: a serial build does not pay for multiprocessing's imports
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    from slidegen.deck.nodes import DeckIndex
    from slidegen.pipeline.decks import build_decks

    todo = list(enumerate(groups(paths, jobs)))
    done: dict[int, list[DeckBuilt]] = {}

    def report(number: int, built: list[DeckBuilt]) -> None:
        done[number] = built
        if progress is not None:
            for deck in built:
                for flavor in formats[deck.path]:
                    progress(display_path(deck.path), flavor)

    groups_of = dict(todo)
    lost: list[int] = []
    context = multiprocessing.get_context("spawn")
    with futures.ProcessPoolExecutor(max_workers=jobs - 1, mp_context=context) as pool:
        running: dict[futures.Future[list[DeckBuilt]], int] = {}
        while todo or running:
            while todo and len(running) < jobs - 1 and not lost:
                number, group = todo.pop(0)
                running[pool.submit(_work, project, group, {p: formats[p] for p in group}, settings)] = number
            if todo:  # the main process takes the last group while the workers are busy
                number, group = todo.pop()
                report(number, build_decks(project, group, formats, settings, bound, DeckIndex()))
                finished = [f for f in running if f.done()]
            else:
                finished = list(futures.wait(running, return_when=futures.FIRST_COMPLETED).done)
            for future in finished:
                number = running.pop(future)
                try:
                    report(number, future.result())
                except BrokenProcessPool:  # a worker died (killed, out of memory)
                    lost.append(number)
    for number in lost:  # written here instead
        report(number, build_decks(project, groups_of[number], formats, settings, bound, DeckIndex()))
    return [deck for number in sorted(done) for deck in done[number]]
