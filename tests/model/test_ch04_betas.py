"""ch04.betas: its settings are ch04.sweep's recorded best cells, and its rate rungs are the sweep's."""

from pathlib import Path

import pytest

from model.experiments.ch04_betas import SWEEP_BEST, TUNED, Betas, neighbours
from model.experiments.ch04_optimisers import Sweep
from slidegen.record.results import Results

RESULTS = Path(__file__).resolve().parents[2] / "results" / "results.md"


@pytest.mark.parametrize("name", sorted(SWEEP_BEST))
def test_the_settings_are_the_best_cells_ch04_sweep_recorded(name: str) -> None:
    results = Results.read(RESULTS)
    lr, wd = SWEEP_BEST[name]
    assert results[f"ch04.sweep.{name}.best_lr"].value == lr
    assert results[f"ch04.sweep.{name}.best_wd"].value == wd
    assert lr in Sweep().lrs[name]


def test_each_beta_runs_at_the_sweeps_best_rate_and_the_rung_either_side() -> None:
    assert neighbours((0.03, 0.1, 0.3, 1.0, 3.0, 10.0), 1.0) == (0.3, 1.0, 3.0)
    assert neighbours((0.003, 0.01, 0.03, 0.1), 0.1) == (0.03, 0.1)  # an end: one side only
    with pytest.raises(ValueError, match="not a rung"):
        neighbours((0.01, 0.03), 0.02)
    c = Betas()
    for name in TUNED:
        grid = c.grid(name)
        assert c.train.betas in grid  # the default beta is one of the grid's rows: the gain is paired against it
        assert len({pair[1 - c.swept(name)] for pair in grid}) == 1  # only the swept beta varies
