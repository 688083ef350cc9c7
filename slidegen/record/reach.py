"""What an experiment reaches, read from the syntax tree alone: nothing is imported.

The project's experiment packages (``model/``) are cut into *units*: each top-level
function or class (decorators and whole body, so a method called on an instance is
covered with its class), each assignment to names (a constant, a config), each import
of an outside library (``import numpy as np``), each statement that runs for its effect
when the module is imported (a call, an ``if``), and a module's ``if __name__ ==
"__main__":`` block. An experiment reaches its decorated function, its decorator call
(id, config, seeds, quick) and, transitively, every unit a reached unit names: a
from-import, a ``module.attr`` on an imported project module, a name of its own module,
an import inside a function. Importing a module runs its effect statements and its
parents' ``__init__.py``, so a reached module brings those too, and the modules it imports.

Where a name cannot be resolved precisely the whole module counts: ``import *``, a project
module used as a value, a name the module does not define, a string naming a project
module or file (``"model.x"``, as in ``python -m model.x``: the one way a ``__main__``
block is reached). An assignment is taken to bind its names and do nothing else (a call
made for its effect stands alone and is covered whenever its module is).

:func:`digest_reach` hashes a reach without naming any module: each unit by its name and
text, each reference by the names and texts of the units it resolves to. A unit's text is its
syntax, not its formatting (format 5): ``ast.unparse`` of the statement with docstrings left
out (comments vanish by construction) and with ``module.`` qualifiers of project modules left
out (``reference.forward`` reads ``forward``). Reformatting, a comment or a docstring edit
changes nothing; changing an expression changes the unit.
Moving a helper to another module, or deleting one of two identical copies, leaves it
unchanged; editing the text of any reached unit changes it; editing a unit nothing
reaches does not. (Two reached definitions of one name and one text in two modules are
one to the hash: what they name in turn tells them apart.)
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from slidegen.errors import SlidegenError

#: The name of the units that run when their module is imported.
EFFECT = "<import-time>"
#: The name of a module's ``if __name__ == "__main__":`` block: reached with its whole module only
#: (a string naming the module, as in ``python -m model.x``), since importing does not run it.
MAIN = "<main>"


@dataclass(frozen=True, eq=False)
class Unit:
    """One top-level statement of a project module (or one name an outside import binds); each unit is
    itself (compared and hashed by identity)."""

    module: str
    path: str
    """Its module's file, relative to the project root."""
    name: str
    """What it binds (``lr_at``; several names joined by ``,``), or :data:`EFFECT`."""
    text: str
    line: int
    refs: tuple[tuple[str, ...], ...] = ()
    """Names it uses, as dotted chains (``("reference", "forward")``)."""
    imports: tuple[tuple[str, str | None], ...] = ()
    """Imports inside it: ``(module, name)`` for ``from module import name``, name None for ``import module``."""
    strings: tuple[str, ...] = ()
    """String constants that name a project module or file (``"model.experiments.repro"``)."""

    @functools.cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]

    @functools.cached_property
    def ident(self) -> tuple[str, str]:
        """What a unit is known by in a fingerprint: its name and text, not its module."""
        return (self.name, self.digest)


@dataclass
class Module:
    """A project module's units and what its top-level names are bound to."""

    name: str
    path: str
    """Relative to the project root (POSIX)."""
    units: list[Unit] = field(default_factory=list)
    binders: dict[str, list[int]] = field(default_factory=dict)
    """Name -> the units that bind it (a module-level statement, or a function declaring it ``global``)."""
    imported: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Name -> ``(project module, attribute or None)`` of a top-level project import."""
    star: list[str] = field(default_factory=list)
    """Project modules imported with ``*``."""
    effects: list[int] = field(default_factory=list)
    tree: ast.Module | None = None


@dataclass(frozen=True)
class Reach:
    """Everything an experiment reaches: units of project modules and other files it declared."""

    units: frozenset[Unit]
    edges: dict[Unit, tuple[tuple[str, tuple[tuple[str, str], ...]], ...]]
    files: dict[str, str]
    """Declared non-Python files (``uses=``): path -> content hash."""

    def covered(self) -> dict[str, str]:
        """``path:name`` -> digest of every unit and file covered, as a run records it (for people)."""
        out: dict[str, str] = dict(self.files)
        for unit in sorted(self.units, key=lambda u: (u.module, u.line)):
            key = f"{unit.path}:{unit.name}"
            while key in out and out[key] != unit.digest:
                key += "'"
            out[key] = unit.digest
        return dict(sorted(out.items()))


def digest_reach(exp_id: str, reach: Reach, fmt: int) -> str:
    """Eight hex digits of SHA-256 over a reach, with no module named (see the module docstring)."""
    code = sorted({(u.name, u.digest, reach.edges.get(u, ())) for u in reach.units})
    payload = {"format": fmt, "id": exp_id, "code": code, "files": dict(sorted(reach.files.items()))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]


# ---------------------------------------------------------------------- reading modules


class Index:
    """The units of every module of ``packages`` under ``root``, parsed on first use."""

    def __init__(self, root: Path, packages: tuple[str, ...]) -> None:
        self.root = root.resolve()
        self.packages = packages
        self._modules: dict[str, Module | None] = {}

    def file_of(self, name: str) -> Path | None:
        if name.split(".", 1)[0] not in self.packages:
            return None
        base = self.root.joinpath(*name.split("."))
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
        return None

    def module(self, name: str) -> Module | None:
        """Module ``name`` if it is a project module (None for a library or a missing file)."""
        if name not in self._modules:
            path = self.file_of(name)
            self._modules[name] = None if path is None else self._read(name, path)
        return self._modules[name]

    def _read(self, name: str, path: Path) -> Module:
        rel = path.relative_to(self.root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text, filename=rel)
        except SyntaxError as error:
            raise SlidegenError(rel, error.lineno or 1, error.offset or 1, f"syntax error: {error.msg}") from error
        except (OSError, UnicodeDecodeError) as error:
            raise SlidegenError(rel, 1, 1, f"cannot read this module: {error}") from error
        module = Module(name, rel, tree=tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in tree.body:  # first what the imports bind, for the qualifiers below
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for bound, target in _import_bindings(node, package):
                    if target[0].split(".", 1)[0] in self.packages and target[1] != "*":
                        module.imported[bound] = target
        for node in tree.body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the module's docstring, or another string that does nothing
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for bound, target in _import_bindings(node, package):
                    if self.file_of(target[0]) is not None or target[0].split(".", 1)[0] in self.packages:
                        if target[1] == "*":
                            module.star.append(target[0])
                        else:
                            module.imported[bound] = target
                    else:
                        canonical = (
                            f"from {target[0]} import {target[1]} as {bound}"
                            if target[1]
                            else f"import {target[0]} as {bound}"
                        )
                        self._add(module, Unit(name, rel, bound, canonical, node.lineno), [bound])
                continue
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            source = self._unqualified(module, node)
            main = _is_main(node)
            imports, declared, strings = self._scan(node, package)
            unit = Unit(
                name,
                rel,
                MAIN if main else ",".join(_bound_names(node)) or EFFECT,
                source,
                start,
                tuple(sorted(set(_chains(node)))),
                imports,
                strings,
            )
            index = self._add(module, unit, [] if main else _bound_names(node))
            if not (main or _is_definition(node)):
                module.effects.append(index)
            for global_name in declared:
                module.binders.setdefault(global_name, []).append(index)
        return module

    def names_module(self, module: Module, name: str) -> bool:
        """``name`` is bound to a project module by a top-level import of ``module``."""
        if name not in module.imported:
            return False
        base, attr = module.imported[name]
        return self.file_of(f"{base}.{attr}" if attr else base) is not None

    def _unqualified(self, module: Module, node: ast.stmt) -> str:
        """The statement's syntax, not its formatting: ``ast.unparse`` of it with docstrings (and any other
        string statement, which does nothing) left out, so comments, layout and docs do not count, and with
        each ``module.`` qualifier of a project module left out (``reference.forward`` reads ``forward``), so
        that moving a definition to another module leaves its callers' text alone; what each name resolves
        to is hashed beside it (:func:`digest_reach`)."""
        tree = _Normalise(lambda name: self.names_module(module, name)).visit(copy.deepcopy(node))
        return ast.unparse(tree)

    def _scan(
        self, node: ast.AST, package: str
    ) -> tuple[tuple[tuple[str, str | None], ...], set[str], tuple[str, ...]]:
        """The imports inside ``node`` (``(module, name)``; name None for ``import module``), the names it
        declares ``global`` and its strings that name a project module or file (``"model.x"``)."""
        imports: set[tuple[str, str | None]] = set()
        declared: set[str] = set()
        strings: set[str] = set()
        for item in ast.walk(node):
            if isinstance(item, ast.Import):
                imports.update((alias.name, None) for alias in item.names)
            elif isinstance(item, ast.ImportFrom):
                base = _from_base(item, package)
                imports.update((base, None if alias.name == "*" else alias.name) for alias in item.names)
            elif isinstance(item, ast.Global):
                declared.update(item.names)
            elif isinstance(item, ast.Constant) and isinstance(item.value, str) and len(item.value) < 200:
                first = item.value.replace("/", ".").split(".", 1)[0]
                if first in self.packages and item.value != first:
                    strings.add(item.value)
        return tuple(sorted(imports, key=str)), declared, tuple(sorted(strings))

    @staticmethod
    def _add(module: Module, unit: Unit, names: list[str]) -> int:
        module.units.append(unit)
        for bound in names:
            module.binders.setdefault(bound, []).append(len(module.units) - 1)
        return len(module.units) - 1


class _Normalise(ast.NodeTransformer):
    """Strips what does not change what a statement does: string statements (docstrings) and the
    ``module.`` of ``module.name`` where ``module`` is a project module."""

    def __init__(self, names_module: Callable[[str], bool]) -> None:
        self.names_module = names_module

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and all(isinstance(s, ast.stmt) for s in body):
                kept = [s for s in body if not _is_string_statement(s)]
                setattr(node, name, kept or ([] if name != "body" else [ast.Pass()]))
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and self.names_module(node.value.id):
            return ast.copy_location(ast.Name(id=node.attr, ctx=node.ctx), node)
        return self.generic_visit(node)


def _is_string_statement(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _import_bindings(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[tuple[str, tuple[str, str | None]]]:
    """``(bound name, (module, attribute or None))`` for each name an import statement binds."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, (alias.name, None)
            else:  # `import a.b.c` binds `a`
                yield alias.name.split(".", 1)[0], (alias.name.split(".", 1)[0], None)
        return
    base = _from_base(node, package)
    for alias in node.names:
        yield alias.asname or alias.name, (base, alias.name)


def _from_base(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _is_main(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    values = [s.value for s in sides if isinstance(s, ast.Constant)]
    return isinstance(node.test.ops[0], ast.Eq) and names == ["__name__"] and values == ["__main__"]


def _is_definition(node: ast.stmt) -> bool:
    """A def, a class or an assignment to plain names: what runs at import only binds names."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, ast.Assign):
        return all(_plain_target(t) for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name)
    return False


def _plain_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_plain_target(e) for e in target.elts)


def _bound_names(node: ast.stmt) -> list[str]:
    """The module-level names a top-level statement binds (at any depth for a compound statement)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        todo: list[ast.AST] = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        todo = [node.target]
    else:
        todo = [node]
    names: list[str] = []
    while todo:
        item = todo.pop()
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(item.name)
            continue  # its body binds names of its own scope
        if isinstance(item, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
            names.append(item.id)
        elif isinstance(item, (ast.Import, ast.ImportFrom)):
            names.extend((a.asname or a.name).split(".", 1)[0] for a in item.names)
        todo.extend(ast.iter_child_nodes(item))
    return sorted(set(names))


def _chains(node: ast.AST) -> Iterator[tuple[str, ...]]:
    """Every name used in ``node`` as a dotted chain: ``a.b.c`` gives ``("a", "b", "c")`` (and not ``("a",)``)."""
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, ast.Name):
            yield (item.id,)
            continue
        if isinstance(item, ast.Attribute):
            parts = [item.attr]
            value = item.value
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name):
                yield (value.id, *reversed(parts))
                continue
            todo.append(value)  # a call's or a subscript's attribute: what it is made of
            continue
        todo.extend(ast.iter_child_nodes(item))


# ---------------------------------------------------------------------- following references


@dataclass
class Links:
    """What one unit's references resolve to (the same whichever experiment reaches it)."""

    targets: dict[str, list[Unit]] = field(default_factory=dict)
    """A reference as written (``reference.forward``) -> the units it names."""
    whole: set[str] = field(default_factory=set)
    """Modules reached whole: used as a value, imported with ``*``, or named in a string."""
    entered: set[str] = field(default_factory=set)
    """Modules imported on the way (their parents and effect statements run)."""


class Resolver:
    """Resolves the references of units of an :class:`Index`, each unit once."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._links: dict[Unit, Links] = {}

    def links(self, unit: Unit) -> Links:
        if unit not in self._links:
            out = Links()
            module = self.index.module(unit.module)
            assert module is not None
            for chain in unit.refs:
                found = self.resolve(module, chain, out)
                if found:  # labelled as the text reads, without a module qualifier
                    label = chain[1:] if len(chain) > 1 and self.index.names_module(module, chain[0]) else chain
                    out.targets.setdefault(".".join(label), []).extend(found)
            for base, name in unit.imports:
                if self.index.module(base) is None:
                    continue
                if name is None:
                    out.whole.add(base)
                else:
                    out.targets.setdefault(f"import {base}:{name}", []).extend(self.attr(base, [name], True, out))
            for text in unit.strings:  # "model.x" or "model/x.py" in a string: run as a program, or imported by name
                name = text[:-3].replace("/", ".") if text.endswith(".py") else text
                if self.index.module(name) is not None:
                    out.whole.add(name)
            self._links[unit] = out
        return self._links[unit]

    def resolve(self, module: Module, chain: tuple[str, ...], out: Links, depth: int = 0) -> list[Unit]:
        """The units ``chain`` names in ``module``'s scope (modules reached whole where it cannot tell)."""
        first, rest = chain[0], list(chain[1:])
        found = [module.units[i] for i in module.binders.get(first, [])]
        if first in module.imported:
            base, attr = module.imported[first]
            if depth > 50:  # imports that go round in a circle
                out.whole.add(base)
            else:
                found += self.attr(base, [attr, *rest] if attr else rest, not rest, out, depth + 1)
        if not found:
            out.whole.update(module.star)
        return found

    def attr(self, base: str, chain: list[str], bare: bool, out: Links, depth: int = 0) -> list[Unit]:
        """``base.chain[0]...`` for project module ``base``; ``bare``: the value itself is used."""
        module = self.index.module(base)
        if module is None:
            return []
        out.entered.add(base)
        if not chain:  # the module used as a value: anything in it may be reached
            if bare:
                out.whole.add(base)
            return []
        sub = f"{base}.{chain[0]}"
        if self.index.module(sub) is not None:
            return self.attr(sub, chain[1:], len(chain) == 1, out, depth + 1)
        if chain[0] in module.binders or chain[0] in module.imported:
            return self.resolve(module, tuple(chain), out, depth + 1)
        out.whole.add(base)  # not defined there as far as the text shows
        return []


class Walker:
    """The closure of units reached from some roots."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.index = resolver.index
        self.units: set[Unit] = set()
        self.modules: set[str] = set()
        self.wholes: set[str] = set()
        self._todo: list[Unit] = []

    def reach(self) -> None:
        while self._todo:
            unit = self._todo.pop()
            links = self.resolver.links(unit)
            self.enter_module(unit.module)
            for name in links.entered:
                self.enter_module(name)
            for name in links.whole:
                self.add_module(name)
            for targets in links.targets.values():
                for target in targets:
                    self.add(target)

    def add(self, unit: Unit) -> None:
        if unit not in self.units:
            self.units.add(unit)
            self._todo.append(unit)

    def add_module(self, name: str) -> None:
        """Every unit of a project module (the conservative answer)."""
        module = self.index.module(name)
        if module is not None and name not in self.wholes:
            self.wholes.add(name)
            self.enter_module(name)
            for unit in module.units:
                self.add(unit)

    def enter_module(self, name: str) -> None:
        """Importing ``name`` runs its parents, its effect statements and the project modules it imports."""
        if name in self.modules:
            return
        self.modules.add(name)
        parts = name.split(".")
        for i in range(1, len(parts)):
            self.enter_module(".".join(parts[:i]))
        module = self.index.module(name)
        if module is None:
            return
        for i in module.effects:
            self.add(module.units[i])
        for base, attr in [*module.imported.values(), *((star, None) for star in module.star)]:
            sub = f"{base}.{attr}" if attr else base
            self.enter_module(sub if self.index.module(sub) is not None else base)

    def edges(self) -> dict[Unit, tuple[tuple[str, tuple[tuple[str, str], ...]], ...]]:
        """Each reached unit's references, each by the names and texts of the units it resolves to."""
        out = {}
        for unit in self.units:
            targets = self.resolver.links(unit).targets
            resolved = ((label, tuple(sorted({t.ident for t in found}))) for label, found in targets.items())
            out[unit] = tuple(sorted(resolved))
        return out


# ---------------------------------------------------------------------- experiments


@dataclass(frozen=True)
class Found:
    """An experiment as its source declares it."""

    id: str
    module: str
    path: str
    function: str
    line: int
    uses: tuple[str, ...]


def find_experiments(index: Index, module: str, registry: str) -> list[Found]:
    """Each top-level function of ``module`` decorated with ``registry``'s ``experiment(...)``."""
    mod = index.module(module)
    if mod is None:
        return []
    assert mod.tree is not None
    out: list[Found] = []
    for node in mod.tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and _is_experiment(index, mod, decorator.func, registry)):
                continue
            where = (mod.path, decorator.lineno, decorator.col_offset + 1)
            first = decorator.args[0] if decorator.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise SlidegenError(
                    *where,
                    "an experiment's id must be a string literal "
                    '(@experiment("ch05.name", ...)) so that it is fingerprinted without importing',
                )
            uses: list[str] = []
            for keyword in decorator.keywords:
                if keyword.arg != "uses":
                    continue
                value = keyword.value
                items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
                if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items):
                    message = (
                        f"experiment '{first.value}': uses= must be a tuple of string literals (paths or "
                        "model.* modules), so that it is fingerprinted without importing"
                    )
                    raise SlidegenError(mod.path, decorator.lineno, 1, message)
                uses += [str(e.value) for e in items if isinstance(e, ast.Constant)]
            line = min(d.lineno for d in node.decorator_list)
            out.append(Found(first.value, module, mod.path, node.name, line, tuple(uses)))
    return out


def _is_experiment(index: Index, module: Module, func: ast.expr, registry: str) -> bool:
    """``func`` names the registry's ``experiment`` (through any import or alias)."""
    chain = next(_chains(func), None) if isinstance(func, (ast.Name, ast.Attribute)) else None
    if chain is None:
        return False
    targets = Resolver(index).resolve(module, chain, Links())
    if targets:
        return any(t.module == registry and t.name == "experiment" for t in targets)
    return chain[-1] == "experiment"


def reach_of(resolver: Resolver, found: Found) -> Reach:
    """What experiment ``found`` reaches (its declared ``uses=`` included)."""
    index = resolver.index
    module = index.module(found.module)
    assert module is not None
    walker = Walker(resolver)
    for i in module.binders.get(found.function, []):
        walker.add(module.units[i])
    walker.enter_module(found.module)
    files: dict[str, str] = {}
    for use in found.uses:
        if "/" not in use and index.module(use) is not None:
            walker.add_module(use)
            continue
        path = index.root / use
        name = use[:-3].replace("/", ".") if use.endswith(".py") else ""
        if name and index.module(name) is not None:
            walker.add_module(name)
        elif path.is_file():
            files[use] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        else:
            message = f"experiment '{found.id}' uses '{use}', which names no file or project module"
            raise SlidegenError(found.path, found.line, 1, message)
    walker.reach()
    return Reach(frozenset(walker.units), walker.edges(), files)
