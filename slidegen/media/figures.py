"""Draw figures from run data: SVG for HTML, 200-dpi PNG for PowerPoint, cached by content.

A figure is a function registered by a figure module (``figures/chNN.py``; the modules,
the registry and the style module are named in ``[tool.slidegen]``, and what they must
provide is in :mod:`slidegen.record.contracts`). :class:`FigureRenderer` is the
``render_figure`` callback of :func:`slidegen.media.images.resolve_media`: it returns
``build/figures/NAME-HASH.svg`` and ``.png``, where HASH covers the figure module and the
project files it imports (the style module among them), the theme, the matplotlib
version, the runs' json files and the box it is drawn for. When both files exist the figure is
not drawn again (matplotlib is not even imported).

A name may carry the box the slide shows the figure in, ``ch01.loss@1136x470`` (CSS px of the
1280x720 slide, :mod:`slidegen.deck.figbox`): the figure is drawn that size (``figure.figsize`` of the
style's settings), so its labels are shown at the point sizes the style sets. Both files record
what the measuring test and the PowerPoint check need (:func:`picture_facts`): the size drawn and the
smallest text in points.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slidegen import theme
from slidegen.atomic import atomic_write
from slidegen.deck import figbox
from slidegen.errors import Diagnostic, SlidegenError
from slidegen.project import Project
from slidegen.record import contracts
from slidegen.record.loader import (
    digest_bytes,
    digest_files,
    load_module,
    local_dependencies,
    located,
    module_file,
    module_name,
    project_imports,
)
from slidegen.record.runstore import RunRecord, run_path

DPI = 200
CACHE_FORMAT = 2
#: The key of the facts a drawn figure carries (PNG text chunk; SVG description).
FACTS_KEY = "slidegen-figure"


class UnknownFigure(SlidegenError):
    """A name no figure module registers. Located at ``figures/``; a caller that knows the
    deck line citing the figure may re-raise it there (``error.name``, ``error.hint``)."""

    def __init__(self, project: Project, name: str, hint: str) -> None:
        self.name, self.hint = name, hint
        super().__init__(project.root / project.layout.figures.split("/", 1)[0], 1, 1, f"unknown figure '{name}'{hint}")


class MissingData(LookupError):
    """A figure asked for a run or a series that is not there."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "missing run data"


class Run(Mapping[str, Any]):
    """One experiment's last run, as a figure sees it: ``run["val_loss"]`` is a NumPy array."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.id = record.id
        self.fingerprint = record.fingerprint
        self.config = record.config
        self.seeds = tuple(record.seeds)
        self.measurements = record.measurements

    def __getitem__(self, name: str) -> Any:
        import numpy as np

        if name not in self.record.series:
            have = ", ".join(sorted(self.record.series)) or "no series at all"
            raise MissingData(f"run '{self.id}' has no series '{name}' (it has: {have})")
        return np.asarray(self.record.series[name], dtype=float)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.record.series))

    def __len__(self) -> int:
        return len(self.record.series)


class Runs(Mapping[str, Run]):
    """The runs a figure may read, by experiment id; a missing one raises :class:`MissingData`."""

    def __init__(self, runs_dir: Path, ids: Iterable[str]) -> None:
        self.runs_dir = runs_dir
        self.ids = tuple(ids)

    def __getitem__(self, exp_id: str) -> Run:
        record = RunRecord.read(run_path(self.runs_dir, exp_id)) if exp_id in self.ids else None
        if record is None:
            declared = "" if exp_id in self.ids else " (and the figure does not list it in runs=)"
            raise MissingData(f"no run data for '{exp_id}'{declared}: `slidegen run {exp_id}` writes it")
        return Run(record)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class FigureInfo:
    """A registered figure as the renderer sees it."""

    name: str
    path: Path
    """The figure module's file."""
    line: int
    runs: tuple[str, ...] | None
    code: dict[str, str]
    """Content hashes of the module and every project file it imports."""


def figure_modules(project: Project) -> list[Path]:
    """The modules ``[tool.slidegen] figures`` matches (``figures/chNN*.py``), in name order."""
    return sorted(path for path in project.root.glob(project.layout.figures) if path.is_file())


def discover_figures(project: Project) -> dict[str, FigureInfo]:
    """Every registered figure by name (imports the figure modules, which is cheap).

    The registry and each figure in it are checked against :mod:`slidegen.record.contracts`.
    """
    root = project.root.resolve()
    layout = project.layout
    paths = figure_modules(project)
    if not paths:
        return {}
    out: dict[str, FigureInfo] = {}
    with project_imports(root, layout.packages):
        registry = load_module(root, layout.figure_registry, "the figure registry")
        for path in paths:
            load_module(root, module_name(root, path), "figures")
        files = {module_name(root, path): path for path in paths}
        style = module_file(root, layout.figure_style)  # every figure is drawn with it, imported or not
        extra = [style] if style else []
        for key, spec in contracts.registry_mapping(registry, "FIGURES", "figure").items():
            contracts.check_figure(key, spec, registry)
            source = files.get(spec.module)
            if source is None:
                continue
            code = digest_files(root, local_dependencies(root, [source, *extra], layout.figure_packages))
            runs = None if spec.runs is None else tuple(spec.runs)
            out[spec.name] = FigureInfo(spec.name, source, spec.line, runs, code)
    return dict(sorted(out.items()))


def figure_names(project: Project) -> set[str]:
    """The names a deck may show as ``fig:NAME`` (for ``slidegen check``)."""
    return set(discover_figures(project))


class FigureRenderer:
    """``render(name) -> (svg, png)``, drawing only figures whose code or data changed.

    ``runs_dir`` defaults to ``results/runs``; ``out_dir`` to ``build/figures``.
    ``drawn`` lists the figures this renderer actually drew (the rest came from the cache).
    """

    def __init__(self, project: Project, runs_dir: Path | None = None, out_dir: Path | None = None) -> None:
        self.project = project
        self.runs_dir = runs_dir or project.runs_dir
        self.out_dir = out_dir or project.build_dir / "figures"
        self.drawn: list[str] = []
        self._infos: dict[str, FigureInfo] | None = None

    @property
    def figures(self) -> dict[str, FigureInfo]:
        if self._infos is None:
            self._infos = discover_figures(self.project)
        return self._infos

    def __call__(self, name: str) -> tuple[Path, Path]:
        base, box = figbox.split(name)
        info = self.figures.get(base)
        if info is None:
            import difflib

            close = difflib.get_close_matches(base, list(self.figures), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise UnknownFigure(self.project, base, hint)
        ids = self._run_ids(info)
        key = self.cache_key(info, ids, box)
        svg, png = self.out_dir / f"{name}-{key}.svg", self.out_dir / f"{name}-{key}.png"
        if not (svg.is_file() and png.is_file()):
            self._draw(info, ids, svg, png, box)
            self.drawn.append(name)
            for old in self.out_dir.glob(f"{name}-*.*"):
                if old not in (svg, png) and old.suffix in (".svg", ".png") and old.stem.rsplit("-", 1)[0] == name:
                    old.unlink(missing_ok=True)
        return svg, png

    def problems(self, names: Iterable[str]) -> list[Diagnostic]:
        """Draw (or find cached) each registered figure of ``names``; one diagnostic per failure."""
        out = []
        for name in sorted(set(names)):
            if figbox.split(name)[0] not in self.figures:
                continue  # `slidegen check` reports unknown names at the deck line
            try:
                self(name)
            except SlidegenError as error:
                out.append(error.diagnostic)
        return out

    def cache_key(self, info: FigureInfo, ids: tuple[str, ...], box: figbox.Box | None = None) -> str:
        """12 hex digits over the figure's code, style, theme, matplotlib version, run data and box."""
        runs = {}
        for exp_id in ids:
            path = run_path(self.runs_dir, exp_id)
            runs[exp_id] = digest_bytes(path.read_bytes()) if path.is_file() else None
        payload = {
            "format": CACHE_FORMAT,
            "name": info.name,
            "code": info.code,
            "theme": digest_bytes(Path(theme.__file__).read_bytes()),
            "matplotlib": _version("matplotlib"),
            "runs": runs,
            "box": None if box is None else [box.w, box.h],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]

    def _run_ids(self, info: FigureInfo) -> tuple[str, ...]:
        if info.runs is not None:
            return info.runs
        chapter = info.name.split(".", 1)[0]
        return tuple(sorted(p.stem for p in self.runs_dir.glob(f"{chapter}.*.json")))

    def _draw(
        self, info: FigureInfo, ids: tuple[str, ...], svg: Path, png: Path, box: figbox.Box | None = None
    ) -> None:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        root = self.project.root.resolve()
        layout = self.project.layout
        with project_imports(root, layout.packages):
            registry = load_module(root, layout.figure_registry, "the figure registry")
            load_module(root, module_name(root, info.path), "figures")
            spec = contracts.registry_mapping(registry, "FIGURES", "figure")[info.name]
            style = self._style_module(root)
            settings: Any = dict(contracts.check_style(style)) if style else {}  # stubs want literal rc keys
            if box is not None:
                settings["figure.figsize"] = box.inches
            with matplotlib.rc_context(settings):
                try:
                    fig = spec.fn(Runs(self.runs_dir, ids))
                except MissingData as error:
                    raise located(error, info.path, f"figure '{info.name}': {error}", info.line) from None
                except Exception as error:
                    message = f"figure '{info.name}' failed: {type(error).__name__}: {error}"
                    raise located(error, info.path, message, info.line) from error
                if not isinstance(fig, Figure):
                    raise contracts.not_a_figure(info.name, fig, contracts.Site(info.path, info.line))
                finish = getattr(style, "finish", None)
                if callable(finish):
                    finish(fig)
                facts = json.dumps(_facts(fig, box), sort_keys=True)
                atomic_write(svg, _saved(fig, "svg", metadata={"Date": None, "Description": facts}))
                atomic_write(png, _saved(fig, "png", dpi=DPI, metadata={"Software": None, FACTS_KEY: facts}))

    def _style_module(self, root: Path) -> Any:
        """The style module; ``None`` when the project has none."""
        name = self.project.layout.figure_style
        if module_file(root, name) is None:
            return None
        return load_module(root, name, "the figure style")


def figure_renderer(project: Project) -> FigureRenderer:
    """The ``render_figure`` callback for :func:`slidegen.media.images.resolve_media`."""
    return FigureRenderer(project)


def _facts(fig: Any, box: figbox.Box | None) -> dict[str, Any]:
    """What a drawn figure records: its size in inches, its box, and its smallest text in points."""
    from matplotlib.text import Text

    fig.draw_without_rendering()  # lays the figure out: ticks exist, and each text knows its place
    frame = fig.bbox
    sizes = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        extent = text.get_window_extent()
        if extent.x1 < frame.x0 or extent.x0 > frame.x1 or extent.y1 < frame.y0 or extent.y0 > frame.y1:
            continue  # outside the figure: never drawn (a tick label beyond the axis' limits)
        sizes.append(float(text.get_fontsize()))
    width, height = (float(v) for v in fig.get_size_inches())
    return {
        "width_in": round(width, 4),
        "height_in": round(height, 4),
        "smallest_pt": min(sizes, default=0.0),
        "box": None if box is None else [box.w, box.h],
    }


def picture_facts(path: Path) -> dict[str, Any] | None:
    """The facts a drawn figure's SVG or PNG records (see :func:`_facts`); ``None`` for another picture."""
    import re

    try:
        data = path.read_bytes()
    except OSError:
        return None
    if path.suffix.lower() == ".svg":
        found = re.search(rb"<dc:description>(.*?)</dc:description>", data, re.S)
        text = found.group(1).replace(b"&quot;", b'"').decode() if found else None
    else:
        marker = FACTS_KEY.encode() + b"\0"
        at = data.find(marker)
        text = None
        if at >= 0:
            length = int.from_bytes(data[at - 8 : at - 4], "big")
            text = data[at + len(marker) : at + length].decode("latin-1")
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _saved(fig: Any, fmt: str, **kwargs: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


@functools.lru_cache(maxsize=8)
def _version(name: str) -> str:
    """An installed distribution's version, looked up once per process (each look-up scans site-packages)."""
    import importlib.metadata  # here: a build that shows no figure does not import it

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"
