"""Figures: registered by name, drawn from run data in the shared style, cached by content."""

from __future__ import annotations

import importlib.util
import struct
import subprocess
import sys
from pathlib import Path

import fake_project
import pytest

from slidegen import theme
from slidegen.errors import SlidegenError
from slidegen.media.figures import FigureRenderer, figure_names
from slidegen.project import Project
from slidegen.record.runstore import RunRecord, run_path


def _load_helper(name: str):  # tests run with --import-mode=importlib: helpers load by path
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_fake_project = fake_project.make_fake_project


def write_alpha(project: Project, scale: float = 1.0) -> None:
    """Run data for ch99.alpha, written directly (no experiment needs to run)."""
    steps = list(range(20))
    curves = [[scale * (4.0 - 0.1 * t - 0.01 * seed) for t in steps] for seed in range(3)]
    series = {"step": steps, "curve": curves}
    record = RunRecord("ch99.alpha", "0123abcd", [0, 1, 2], {"steps": 20}, 0.1, {}, series=series)
    record.write(run_path(project.runs_dir, "ch99.alpha"))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = make_fake_project(tmp_path / "proj")
    write_alpha(project)
    return project


def test_figure_names_come_from_the_project_without_importing_matplotlib(project: Project) -> None:
    assert figure_names(project) == {"ch99.curve", "ch99.broken"}
    code = (
        "import sys; from pathlib import Path; from slidegen.media.figures import figure_names; "
        "from slidegen.project import Project; "
        f"names = figure_names(Project(Path({str(project.root)!r}))); "
        "print(sorted(names), 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['ch99.broken', 'ch99.curve'] False"


def test_renders_svg_and_200_dpi_png_in_the_shared_style(project: Project) -> None:
    renderer = FigureRenderer(project)
    svg, png = renderer("ch99.curve")
    assert renderer.drawn == ["ch99.curve"]
    assert svg.parent == png.parent == project.build_dir / "figures"
    text = svg.read_text()
    assert text.startswith("<?xml") and "<svg" in text
    assert theme.PALETTE[0] in text and theme.PALETTE[1] in text  # the colour-blind-safe cycle
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1920, 1080)  # 9.6 x 5.4 in at 200 dpi


def test_a_cached_figure_is_not_redrawn_until_its_data_or_code_changes(project: Project) -> None:
    first = FigureRenderer(project)("ch99.curve")
    mtimes = [p.stat().st_mtime_ns for p in first]

    again = FigureRenderer(project)  # a new process would see the same: the cache is on disk
    assert again("ch99.curve") == first and again.drawn == []
    assert [p.stat().st_mtime_ns for p in first] == mtimes

    write_alpha(project, scale=2.0)  # new run data: the figure follows it
    moved = FigureRenderer(project)
    second = moved("ch99.curve")
    assert moved.drawn == ["ch99.curve"] and second != first
    assert not any(p.exists() for p in first)  # the stale drawing is gone

    figure_py = project.root / "figures" / "ch99.py"
    figure_py.write_text(figure_py.read_text().replace('ax.set_xlabel("step")', 'ax.set_xlabel("training step")'))
    edited = FigureRenderer(project)
    assert edited("ch99.curve") != second and edited.drawn == ["ch99.curve"]


def test_a_missing_series_is_a_clear_error_at_the_figure_code(project: Project) -> None:
    with pytest.raises(SlidegenError) as caught:
        FigureRenderer(project)("ch99.broken")
    d = caught.value.diagnostic
    assert d.path.endswith("figures/ch99.py") and d.line == 23
    assert "run 'ch99.alpha' has no series 'no_such_series' (it has: curve, step)" in d.message
    problems = FigureRenderer(project).problems(["ch99.curve", "ch99.broken", "ch99.unknown"])
    assert [p.line for p in problems] == [23]


def test_missing_run_data_and_unknown_figures_are_errors(project: Project) -> None:
    run_path(project.runs_dir, "ch99.alpha").unlink()
    with pytest.raises(SlidegenError, match=r"no run data for 'ch99.alpha': `slidegen run ch99.alpha` writes it"):
        FigureRenderer(project)("ch99.curve")
    with pytest.raises(SlidegenError, match=r"unknown figure 'ch99.curv' \(did you mean 'ch99.curve'\?\)"):
        FigureRenderer(project)("ch99.curv")


def test_style_is_legible_and_uses_the_theme() -> None:
    from figures import style

    rc = style.rc()
    assert rc["font.size"] >= 16 and rc["lines.linewidth"] >= 2
    assert rc["axes.prop_cycle"].by_key()["color"] == list(theme.PALETTE)
    assert rc["font.sans-serif"][0] in ("Carlito", "Calibri", "Liberation Sans", "DejaVu Sans")
    assert rc["text.color"] == theme.TEXT


def test_a_figure_is_drawn_for_its_box_and_records_its_smallest_text(project: Project) -> None:
    """``NAME@WxH``: drawn W/96 x H/96 in, so the style's points are the points shown; the size is in the key."""
    from slidegen.media.figures import picture_facts

    renderer = FigureRenderer(project)
    svg, png = renderer("ch99.curve@536x400")
    facts = picture_facts(svg)
    assert facts == picture_facts(png)
    assert facts["width_in"] == pytest.approx(536 / 96, abs=1e-3)
    assert facts["height_in"] == pytest.approx(400 / 96, abs=1e-3)
    assert facts["smallest_pt"] >= 18 and facts["box"] == [536, 400]
    width, height = struct.unpack(">II", png.read_bytes()[16:24])
    assert abs(width - 536 / 96 * 200) <= 1 and abs(height - 400 / 96 * 200) <= 1
    wide, _ = renderer("ch99.curve@1136x400")
    assert wide != svg and svg.is_file()  # another box: another file, and the first one stays
    assert picture_facts(wide)["width_in"] == pytest.approx(1136 / 96, abs=1e-3)
    assert picture_facts(Path(__file__)) is None  # not a drawn figure


def test_style_raises_small_text_and_parts_curves_in_grey_scale() -> None:
    from matplotlib.figure import Figure

    from figures import style

    fig = Figure()
    ax = fig.subplots()
    ax.annotate("note", (0, 0), fontsize=11)
    style.finish(fig)
    assert min(t.get_fontsize() for t in fig.texts + ax.texts) >= style.MIN_PT
    styles = style.rc()["axes.prop_cycle"].by_key()["linestyle"]
    assert len(set(map(str, styles))) == len(styles) == len(theme.PALETTE)  # each colour its own dash
