"""The figure registry: one entry per notebook, and everything that lists figures derived from it."""

import ast
import importlib
import re

import pytest

from stitchkit.base import paths
from stitchkit.book import catalogue, gpu_estimates, notebooks
from stitchkit.data import datasets
from stitchkit.registry import figures, papers


def test_every_notebook_has_one_registry_entry_and_every_entry_a_notebook():
    assert set(notebooks.discover()) == set(figures.BY_ID)


def test_the_catalogue_the_cli_presets_and_the_parts_come_from_the_registry():
    assert [fid for fid, _ in catalogue.CATALOGUE] == [f.id for f in figures.FIGURES]
    assert {f.prefix for f in figures.FIGURES} == set(papers.PARTS) == set(figures.PART_DATASETS)


def test_the_registry_states_the_scales_each_figure_has_presets_for():
    """Issue 48: the scales are plain data in the registry (the command line reads them without
    importing an experiment module); each is a scale of the figure's presets. A preset may exist at a
    scale the registry does not offer yet (a gpu preset derived from a shared recipe, offered once
    it has been reviewed and has an estimate: H-F5 shares H-F2's presets)."""
    for f in figures.FIGURES:
        module, name = f.presets_at
        found = getattr(importlib.import_module(f"stitchkit.experiments.{module}"), name)
        assert set(figures.REQUIRED_SCALES) <= set(f.scales) <= set(found), f.id
        assert list(figures.presets(f.id)) == list(f.scales) and figures.config_class(f.id) is type(found["demo"])
    assert "gpu" in figures.scales_of("H-F5") and "gpu" in figures.scales_of("H-F2")
    assert figures.presets("Q-9") is None and figures.scales_of("Q-9") == figures.REQUIRED_SCALES


def test_every_figure_reads_registered_data_sets():
    known = set(datasets.list_datasets())
    for f in figures.FIGURES:
        assert set(f.needs) <= known, f.id


def test_a_bad_entry_is_refused_naming_the_figure():
    with pytest.raises(ValueError, match="Q-1: unknown part prefix 'Q'"):
        figures.Figure("Q-1", "a figure of no part", "bansal", "PRESETS_F2A")
    with pytest.raises(ValueError, match="B-F99: kind must be one of figure, table"):
        figures.Figure("B-F99", "a plot", "bansal", "PRESETS_F2A", kind="plot")


def test_an_optional_scale_is_offered_where_the_figure_states_its_cost_there():
    """Issue 63: the figure's gpu estimate, network share and rank sit in its entry; the scales it
    offers, the batch's tables and its priority order are derived from them."""
    for f in figures.FIGURES:
        assert ("gpu" in f.scales) == ("gpu" in f.costs), f.id
        if "gpu" in f.costs:
            assert gpu_estimates.ESTIMATES["gpu"][f.id] == f.costs["gpu"].seconds
    ranks = [f.costs["gpu"].rank for f in figures.FIGURES if "gpu" in f.costs and f.costs["gpu"].rank]
    assert sorted(ranks) == list(range(1, len(ranks) + 1))  # one order, no ties or gaps
    assert gpu_estimates.PRIORITY[0] == "H-F2"
    with pytest.raises(ValueError, match="B-F99: costs are for the optional scales"):
        figures.Figure("B-F99", "a plot", "bansal", "PRESETS_F2A", costs={"demo": figures.Cost(1.0)})


def _notebook_imports(fid: str) -> set[str]:
    """The experiment modules a notebook imports (``from stitchkit.experiments.x import y`` -> x.y)."""
    tree = ast.parse((paths.NOTEBOOKS_DIR / f"{fid}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("stitchkit.experiments"):
            base = node.module[len("stitchkit.experiments"):].lstrip(".")
            found |= {f"{base}.{a.name}".lstrip(".") for a in node.names} | {base}
    return found


def test_the_registered_module_is_the_figures_code():
    """Issue 63: the registry points at the module that computes and judges the figure (which its
    notebook calls), not merely at where its presets are."""
    for f in figures.FIGURES:
        assert f.module in _notebook_imports(f.id), (f.id, f.module)


# Library code that names another page on purpose: a page built from other pages' results (B-T1), the
# zoos of the pages across the papers (whose networks they are). A history log names pages too.
CROSS_REFERENCES = {"experiments/bansal/tables.py", "experiments/across.py", "experiments/across_identify.py",
                    "experiments/across_conclusions.py", "book/changes.py", "book/amendments.py"}


def test_a_figure_id_is_written_once_in_the_library():
    """Issue 63: a figure's facts live in its registry entry and its module, not in tables keyed by
    its ID elsewhere. Docstrings and comments may name pages; code may not, outside the registry and
    the deliberate cross-references above."""
    ids = set(figures.BY_ID)
    pattern = re.compile(r"^[BHSJX]-[A-Z0-9.]+$")
    found = {}
    for path in sorted(paths.PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(paths.PACKAGE_DIR).as_posix()
        if rel == "registry/figures.py" or rel in CROSS_REFERENCES:
            continue
        tree = ast.parse(path.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and pattern.match(node.value) and node.value in ids):
                found.setdefault(rel, []).append(node.value)
    assert not found, found
    text = (paths.PACKAGE_DIR / "registry" / "figures.py").read_text()
    assert all(len(re.findall(rf'Figure\("{re.escape(i)}"', text)) == 1 for i in ids)
