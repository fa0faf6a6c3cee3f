"""The library's shape: no import cycle between its modules, imports one way (the science, the book, the
command line), the package files agreeing with each other."""

from __future__ import annotations

import ast
from pathlib import Path

import stitchkit

ROOT = Path(stitchkit.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The stitchkit modules ``name`` imports anywhere in its body (function-level imports too:
    a cycle hidden inside a function is still a cycle)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from pkg import a, b``: each name that is a module is an edge; else the names are pkg's
            named = {f"{target}.{a.name}" for a in node.names} & modules.keys()
            candidates = named or ({target} & modules.keys())
        elif isinstance(node, ast.Import):
            candidates = {a.name for a in node.names} & modules.keys()
        else:
            continue
        out |= candidates - {name}
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_library_has_no_import_cycle():
    modules = _modules()
    # a package's __init__ re-exports its submodules: an edge from a submodule to its own package
    # is an edge to the names the package defines itself, which the packages here do not
    graph = {n: {m for m in _imports(n, p, modules) if not n.startswith(m + ".")} for n, p in modules.items()}
    assert _cycles(graph) == []


def _layer(module: str) -> int:
    """0 the science (everything a page's kernel may import), 1 the book, 2 the command line."""
    if module in ("stitchkit.cli", "stitchkit.__main__"):
        return 2
    return 1 if module == "stitchkit.book" or module.startswith("stitchkit.book.") else 0


def test_imports_run_one_way_the_science_then_the_book_then_the_command_line():
    """Issue 48: nothing a notebook runs imports the book's machinery, and the book does not
    import the command line."""
    modules = _modules()
    graph = {n: _imports(n, p, modules) for n, p in modules.items()}
    upward = sorted((n, m) for n, deps in graph.items() for m in deps if _layer(m) > _layer(n))
    assert upward == []
    assert _layer("stitchkit.book.execution") == 1 and _layer("stitchkit.registry.papers") == 0  # the layers exist


# The core's layers as folders, lowest first (issue 63, item 4): a module imports only from its own
# folder and the folders below it; the experiments, the book and the command line sit on top.
CORE_LAYERS = stitchkit.LAYERS


def _core_layer(module: str) -> int | None:
    parts = module.split(".")
    return CORE_LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in CORE_LAYERS else None


def test_the_cores_layers_are_folders_and_import_downward():
    modules = _modules()
    flat = sorted(n for n, p in modules.items() if n.count(".") == 1 and p.parent == ROOT
                  and n not in ("stitchkit.cli", "stitchkit.__main__", "stitchkit.book", "stitchkit.experiments"))
    assert flat == [], "a core module outside the layers' folders"
    upward = []
    for n, p in modules.items():
        mine = _core_layer(n)
        for m in _imports(n, p, modules):
            theirs = _core_layer(m)
            above = m.startswith(("stitchkit.experiments", "stitchkit.book", "stitchkit.cli"))
            if mine is not None and (above or (theirs is not None and theirs > mine)):
                upward.append((n, m))
    assert upward == []
    assert all((ROOT / layer / "__init__.py").exists() for layer in CORE_LAYERS)


def test_no_module_name_at_two_levels_and_no_re_exports():
    """A module's name says where it is (no ``grid.py`` both in the core and in an experiment
    package), and a name is imported from the module that defines it: no module's ``__all__`` names
    what it imports, and nothing reads a name through a module that only imports it."""
    modules = _modules()
    by_name: dict[str, set[int]] = {}
    for n in modules:
        if n.rpartition(".")[2] != "__init__" and n.count(".") >= 2:
            by_name.setdefault(n.rpartition(".")[2], set()).add(n.count("."))
    assert sorted(k for k, depths in by_name.items() if len(depths) > 1) == []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        imported = {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    for a in node.names}
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                listed = {e.value for e in node.value.elts}
                assert not listed & imported, (name, sorted(listed & imported))


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_environment_yml_and_pyproject_name_the_same_packages():
    """Issue 49: the conda file agrees with pyproject.toml (its dependencies and its book, dev and
    dask extras), so that neither install misses what the other has."""
    import re
    import tomllib

    import yaml

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *(d for extra in ("book", "dev", "dask")
                                          for d in project["optional-dependencies"][extra])]
    name = lambda spec: re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")  # noqa: E731
    py = {name(d) for d in wanted}
    env = yaml.safe_load((root / "environment.yml").read_text())["dependencies"]
    conda = {name(d) for d in env if isinstance(d, str)} - {"python", "pip"}
    pip = {name(d) for item in env if isinstance(item, dict) for d in item["pip"] if not d.startswith("-e")}
    have = (conda | pip) - {"pytorch"} | ({"torch"} if "pytorch" in conda else set())
    have = {"dask" if n == "distributed" else n for n in have}
    assert have == py, f"only in environment.yml: {sorted(have - py)}; only in pyproject.toml: {sorted(py - have)}"


def test_license_citation_and_version_are_in_place(capsys):
    import pytest

    import stitchkit
    from stitchkit import cli

    root = Path(__file__).resolve().parents[1]
    assert (root / "LICENSE").read_text().startswith("MIT License")
    assert f'version: "{stitchkit.__version__}"' in (root / "CITATION.cff").read_text()
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"stitchkit {stitchkit.__version__}"


def test_list_and_help_import_neither_torch_nor_an_experiment():
    """``stitchkit list`` and ``stitchkit --help`` read the registry as plain data: no torch, no
    experiment module (issue 48)."""
    import subprocess
    import sys

    for argv in (["list"], ["--help"], ["list", "B-F2A"]):
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "stitchkit", *argv], capture_output=True,
                              text=True, cwd=ROOT.parent)
        assert done.returncode == 0, done.stderr[-2000:]
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
        heavy = sorted(m for m in imported if m == "torch" or m.startswith("stitchkit.experiments"))
        assert not heavy, (argv, heavy)


def test_no_facades_and_no_private_names_across_modules():
    """Issue 48: the experiment packages re-export nothing (a name is imported from the module that
    defines it), and no module imports another's private (underscore) names."""
    modules = _modules()
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        if name.startswith("stitchkit.experiments.") and path.name == "__init__.py":
            assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], name
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("stitchkit")):
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                assert not private, (name, node.module, private)


def test_each_papers_title_and_authors_read_the_same_everywhere():
    """Issue 64, finding 3: the Smith & Marcu title differed between the introduction and its part
    page, and CITATION.cff misspelt Soljačić. The introduction and CITATION.cff give each paper's
    title as stitchkit.registry.papers does (the part pages are generated from it)."""
    import yaml

    from stitchkit.registry.papers import PAPERS

    repo = ROOT.parent
    intro = (repo / "book" / "intro.md").read_text().lower()
    cited = {r["title"].lower() for r in yaml.safe_load((repo / "CITATION.cff").read_text())["references"]}
    for paper in PAPERS:
        if paper.beyond:
            continue
        assert paper.title.lower() in intro, paper.title
        assert paper.title.lower() in cited, paper.title
    text = (repo / "book" / "intro.md").read_text() + (repo / "CITATION.cff").read_text()
    assert "Soljačić" in text and "Soljacic" not in text and "Soljagic" not in text


def test_the_glossary_states_the_gating_rule_as_the_verdicts_apply_it():
    """Issue 64, finding 3: "a failed control makes the verdict inconclusive" contradicted the rule
    that a failed control gates only an outcome it could have produced (stitchkit.verdicts.gating)."""
    glossary = " ".join((ROOT.parent / "book" / "glossary.md").read_text().split())
    assert "A failed control makes the verdict {term}`inconclusive at this scale`. " not in glossary
    assert "when it could have produced the outcome observed" in glossary


def test_no_notebook_types_its_own_run_time():
    """Issue 64, item 4: the pages' typed times ("about 4 minutes", "about an hour") disagreed
    with their measured ones and the Cost page's. A page's times are the rerun box's, measured
    (as run, and from an empty cache); its prerequisites say what it needs, and no time."""
    import re

    for nb in sorted((ROOT.parent / "notebooks").glob("*.py")):
        text = nb.read_text()
        m = re.search(r"^# \*\*Prerequisites\.\*\*.*?(?=^#\s*$|^# \*\*|^[^#])", text, re.M | re.S)
        assert m, f"{nb.name}: no Prerequisites paragraph"
        assert not re.search(r"\b(minutes?|hours?|seconds)\b", m.group(0).replace("runs in seconds", "")), \
            f"{nb.name}: its prerequisites type a time: {m.group(0)!r}"


def test_one_helper_derives_a_figures_presets_from_anothers():
    """Issue 63, finding 3: the idiom that copies a preset into another config class appeared 8
    times; stitchkit.registry.scales.derived / derive_presets is the one way now."""
    offenders = [p.relative_to(ROOT) for p in ROOT.rglob("*.py") if "__dataclass_fields__" in p.read_text()]
    assert not offenders, f"copy a preset with stitchkit.registry.scales.derived / derive_presets, not by hand: {offenders}"


def test_the_package_finds_its_checkout_from_any_folder(tmp_path):
    """The package's folder and the checkout are found from where the modules are (stitchkit.base.paths
    sits a folder below the package), not from the folder a command is run in."""
    import subprocess
    import sys

    code = "from stitchkit.base import paths; print(paths.PACKAGE_DIR, paths.REPO_ROOT)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(ROOT), str(ROOT.parent)]
