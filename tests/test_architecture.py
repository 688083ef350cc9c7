"""The shape of the package: stages in one order, imports only downward, no circles, writers apart from the reader.

Read from the source (every ``import``, at module level, in functions and under ``TYPE_CHECKING``), so the
rules hold for the code as written, not for what one test run happens to import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "slidegen"

#: The stages, lowest first: a module imports from its own stage or a lower one, never a higher one.
#: The first stage is the handful of top-level modules every stage shares.
STAGES = ["", "deck", "read", "record", "bind", "media", "write", "pipeline", "run", "check", "serve", "cli"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def stage(module: str) -> str:
    """``slidegen.write.pptx.render`` -> ``write``; a top-level module (``slidegen.errors``) -> ``""``."""
    if module == "slidegen.__main__":
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE / parts[1] / "__init__.py").is_file() else ""


def imports(module: str, typing_only: bool = True) -> Iterator[tuple[str, int]]:
    """Every slidegen module ``module`` imports, with the line (``typing_only=False``: not those under
    ``if TYPE_CHECKING:``, which never run)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing = {
        id(inner)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for stmt in block.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if not typing_only and id(node) in typing:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target.startswith("slidegen") and target != module:
                yield target, node.lineno


def test_every_subpackage_is_a_stage_in_the_order() -> None:
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert packages == set(STAGES[1:])
    for name in STAGES[1:]:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, f"slidegen/{name}/__init__.py needs a docstring saying what the stage does"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_nothing_imports_upward(module: str) -> None:
    mine = STAGES.index(stage(module))
    upward = [f"{target} (line {line})" for target, line in imports(module) if STAGES.index(stage(target)) > mine]
    assert not upward, f"{module} imports a later stage: {upward}"


def test_writers_and_checks_do_not_read_markdown() -> None:
    """A writer sees only the Deck: nothing of read/; a check reads no Markdown or YAML itself."""
    found = []
    for module in MODULES:
        targets = {target for target, _ in imports(module)}
        if stage(module) == "write":
            found += [(module, t) for t in targets if stage(t) == "read"]
        if stage(module) == "check":
            found += [(module, t) for t in targets if t in ("slidegen.read.parse", "slidegen.read.convert")]
        if stage(module) in ("write", "check") and not module.startswith("slidegen.write.markdown"):
            found += [(module, "yaml") for _ in [1] if "yaml" in external_imports(module)]  # markdown writes YAML
    assert not found


def external_imports(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names} | {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    }


def test_the_import_graph_has_no_circle() -> None:
    """No circle among the imports that run (at module level or in functions); an import only for type
    checking (``if TYPE_CHECKING:``) runs never and may point back."""
    graph = {module: {target for target, _ in imports(module, typing_only=False)} for module in MODULES}
    # a package's __init__ re-exporting its own modules is no circle of code
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> None:
        if module in path:
            raise AssertionError("import circle: " + " -> ".join([*path[path.index(module) :], module]))
        if module in done:
            return
        path.append(module)
        for target in sorted(graph[module]):
            if not (MODULES[target].name == "__init__.py" and module.startswith(target + ".")):
                visit(target)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_writers_take_settings_and_clicks_from_the_deck() -> None:
    """The deck's settings (``Deck.settings``), a slide's look (``Slide.look``: zoom, transition, background;
    its tone: ``Deck.layout_of``) and its click timings are read once; no writer reads them again."""
    found = []
    for module, path in MODULES.items():
        if stage(module) != "write":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in ("deck_settings", "slide_look", "of_slide", "slide_layout", "of_frontmatter") or (
                isinstance(node, ast.Attribute)
                and node.attr == "resolve"
                and isinstance(node.value, ast.Name)
                and node.value.id == "clicks"
            ):
                found.append(f"{module}:{node.lineno} {name}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in ("lineNumbers", "zoom", "transition", "colorSchema", "aspectRatio")
            ):
                found.append(f"{module}:{node.lineno} reads {node.args[0].value!r} from the frontmatter")
    assert not found


#: What tells a component, a diagram or an HTML region from raw strings: the reader's business
#: (slidegen/deck/htmlkinds.py), never a writer's, which matches on the node types.
RAW_RECOGNISERS = (
    "is_custom_tag",
    "custom_tags",
    "html_instances",
    "is_diagram",
    "needs_picture",
    "diagram_key",
    "component_key",
    "region_key",
)


def test_writers_match_components_diagrams_and_regions_by_type() -> None:
    """No writer recognises a component, a Mermaid diagram or an HTML region that needs a picture from a raw
    string (a tag name, a fence's language, the HTML of a block), nor computes a picture's key: the reader typed
    them (``Component``, ``ComponentBlock``, ``Diagram``, ``HtmlRegion``), each node knows its ``picture_key``."""
    found = []
    for module, path in MODULES.items():
        if stage(module) != "write":
            continue
        found += [f"{module} imports {t}" for t, _ in imports(module) if t == "slidegen.deck.htmlkinds"]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in RAW_RECOGNISERS:
                found.append(f"{module}:{node.lineno} {name}")
            if isinstance(node, ast.FunctionDef) and node.name in ("picture_key", *RAW_RECOGNISERS):
                found.append(f"{module}:{node.lineno} defines {node.name}")
            if isinstance(node, ast.Compare) and any(
                isinstance(side, ast.Constant) and side.value == "mermaid" for side in [node.left, *node.comparators]
            ):
                sides = ast.unparse(node)
                if ".lang" in sides:
                    found.append(f"{module}:{node.lineno} tests a fence's language: {sides}")
    assert not found, found
