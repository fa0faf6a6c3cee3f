"""No page's "Deviations" contradict its changes log (issue 64, item 4).

A change after a run (:data:`stitchkit.book.changes.CHANGES`) that replaced a number or a rule
names, in ``superseded``, patterns of the old statement. Each notebook's "Deviations" section (the
source in ``notebooks/``, which the next run renders) must not state one of its changes' old
statements, unless the sentence puts it in the past ("2,000 before 2026-11-27", "earlier runs
numbered them by stage") or names the change's date.

What this catches: a deviation that still states a number or rule its changes log says was
replaced, where the entry's patterns describe it (the reader review's H-F2 "2,000 test images"
and X-3 "one pair each" are such statements, checked below verbatim). What it cannot catch: a
replaced statement for which no entry has a pattern, a wrong statement that no change describes,
a number that is true but incomplete (B-F2A gave ResNet-164's self-stitch bound, 0.20, without
every architecture's, 0.42), or a past-tense word elsewhere in the same sentence that excuses it.
"""

from __future__ import annotations

import re

import jupytext
import pytest

from stitchkit.base import paths
from stitchkit.book import changes
from stitchkit.book.changes import CHANGES, superseded_statements

NOTEBOOKS = sorted(paths.NOTEBOOKS_DIR.glob("*.py"))


def deviations(path) -> str:
    """The markdown of a notebook's "Deviations" section (its heading to the next "## " heading)."""
    text, inside = [], False
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "markdown":
            continue
        if cell.source.lstrip().startswith("## "):
            inside = cell.source.lstrip().startswith("## Deviations")
        if inside:
            text.append(cell.source)
    return "\n\n".join(text)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_page_s_deviations_state_what_its_changes_log_replaced(path):
    text = deviations(path)
    assert text, f"{path.stem} has no 'Deviations' section"
    found = superseded_statements(path.stem, text)
    assert not found, "\n".join(f"{path.stem}: '{sentence}' states what the change of {c.date} ({c.commit}) "
                                f"replaced: {c.what[:120]}" for c, sentence in found)


def test_every_superseded_pattern_compiles():
    assert any(c.superseded for c in CHANGES)
    for c in CHANGES:
        for pattern in c.superseded:
            re.compile(pattern)


# Statements the reader review of issue 64 found on the pages (H-F2's from its notebook before
# commit 93c5ba6, X-3's before 0d3de0c), and the way the pages say the same now.
STALE = {"H-F2": "`demo` trains 2 epochs on 5,000 images in batches of 64, 156 steps (the paper: 4 epochs on "
                 "50,000 in batches of 256, 780 steps), and measures accuracy on 2,000 test images (the paper: 10,000).",
         "X-3": "- **Networks** are the zoos' at this scale, as their pages trained them (at `demo` width 8,\n"
                "  16 for Smith & Marcu's, and 3 to 4 epochs), far from the papers' accuracies; one pair each."}
DATED = {"H-F2": "`demo` trains 2 epochs on 5,000 images in batches of 64, 156 steps, and measures accuracy on all "
                 "10,000 test images, as the paper (2,000 before 2026-11-27).",
         "X-3": "Each conclusion's figure is drawn from one pair of networks; the two triangle claims' intervals "
                "carry the network-to-network spread of the crossed design above."}


@pytest.mark.parametrize("figure_id", STALE)
def test_a_stale_deviation_is_found_and_a_dated_one_passes(figure_id):
    assert superseded_statements(figure_id, STALE[figure_id])
    assert not superseded_statements(figure_id, DATED[figure_id])


def test_a_past_marker_or_the_change_s_date_lets_a_statement_stand():
    stage = next(c for c in CHANGES if "numbered by stage" in c.what)
    assert superseded_statements("H-F2", "Layers are numbered by stage (0-4).")
    assert not superseded_statements("H-F2", "Earlier `demo` runs numbered them by stage (0-4).")
    assert not superseded_statements("H-F2", f"Layers numbered by stage ({stage.date}).")
    assert not superseded_statements("B-F2A", "Layers are numbered by stage (0-4).")  # not a change of B-F2A
    assert changes.sentences("- a; b.\n- c. D\n  e\n\nF") == ["a;", "b.", "c.", "D e", "F"]
