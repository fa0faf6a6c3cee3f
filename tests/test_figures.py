"""The figure registry: one entry per notebook, and everything that lists figures derived from it."""

import pytest

from stitchkit import catalogue, datasets, execution, experiments, figures


def test_every_notebook_has_one_registry_entry_and_every_entry_a_notebook():
    assert set(execution.discover()) == set(figures.BY_ID)


def test_the_catalogue_the_cli_presets_and_the_parts_come_from_the_registry():
    assert [fid for fid, _ in catalogue.CATALOGUE] == [f.id for f in figures.FIGURES]
    assert set(experiments.PRESETS_OF) == set(figures.BY_ID)
    assert experiments.PRESETS_OF["H-F5"] == ("hernandez", "PRESETS_F2", ("smoke", "demo", "paper"))
    assert {f.prefix for f in figures.FIGURES} == set(catalogue.PARTS) == set(figures.PART_DATASETS)


def test_every_figure_reads_registered_data_sets():
    known = set(datasets.list_datasets())
    for f in figures.FIGURES:
        assert set(f.needs) <= known, f.id


def test_a_bad_entry_is_refused_naming_the_figure():
    with pytest.raises(ValueError, match="Q-1: unknown part prefix 'Q'"):
        figures.Figure("Q-1", "a figure of no part", "bansal", "PRESETS_F2A")
    with pytest.raises(ValueError, match="B-F99: kind must be one of figure, table"):
        figures.Figure("B-F99", "a plot", "bansal", "PRESETS_F2A", kind="plot")
