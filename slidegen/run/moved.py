"""The results a run moved: results.md's cited rows brought in line, and the slides citing each moved key."""

from __future__ import annotations

from slidegen.bind.cited import update_cited
from slidegen.bind.library import cited_rows, load_library
from slidegen.pipeline.bound import load_results
from slidegen.pipeline.index import citations, project_decks, slide_finder
from slidegen.project import Project
from slidegen.record.results import Result
from slidegen.run.runner import Change


def write_cited(project: Project) -> list[Change]:
    """Bring results.md's cited rows in line with ``results/cited.yaml``; the rows whose number moved.

    Each row's source is its citation as the project's CSL style writes it. results.md is
    written (atomically) when any row changed; a row whose number stayed (its wording or
    source changed) is written but not listed as moved.
    """
    library = load_library(project.root)
    if not library.cited.exists:
        return []
    results = load_results(project)
    before = dict(results)
    moved = update_cited(results, cited_rows(library))
    if not moved:
        return []
    project.results_path.parent.mkdir(parents=True, exist_ok=True)
    results.write(project.results_path)
    return [
        Change(key, before.get(key), results.get(key), ())
        for key in moved
        if _number(before.get(key)) != _number(results.get(key))
    ]


def _number(row: Result | None) -> tuple[float, int, float | None, int | None] | None:
    """What a slide prints of a row: its value, digits, sd and n."""
    return None if row is None else (row.value, row.digits, row.sd, row.n)


def add_citations(project: Project, changes: list[Change]) -> list[Change]:
    """``changes`` with the slides citing each key: every deck read once (one that does not parse cites
    nothing here; ``build`` and ``check`` say why)."""
    if not changes:
        return changes
    decks = project_decks(project.root).parsed.values()
    cited = citations(decks, project.root)
    slide_of = slide_finder(decks, project.root)
    return [
        Change(
            change.key,
            change.old,
            change.new,
            tuple((path, line, slide_of(path, line)) for path, line in cited.get(change.key, [])),
        )
        for change in changes
    ]
