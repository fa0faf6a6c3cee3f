"""The figure registry: one entry per notebook, and everything that lists figures derived from it."""

import importlib

import pytest

from stitchkit.book import catalogue, execution, notebooks
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
        found = getattr(importlib.import_module(f"stitchkit.experiments.{f.module}"), f.presets)
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
