"""What pages show from one call (stitchkit.pagekit.display), and the numbers H-F2's prose quotes from the
committed spot checks."""

import math

import pandas as pd

from stitchkit.base.provenance import load_spot_json
from stitchkit.experiments.bansal import f3c_f6, length
from stitchkit.experiments.hernandez import all_layers
from stitchkit.experiments.hernandez import spot as hspot
from stitchkit.pagekit.display import Section, plain
from stitchkit.verdicts.claims import ClaimSpec
from stitchkit.verdicts.results import at_most


def test_plain_hides_row_numbers_and_keeps_values():
    t = pd.DataFrame({"a": [1.23456, 2.0], "b": ["x", "y"]})
    html = plain(t).to_html()
    assert "1.23" in html and "1.23456" not in html and "row_heading" not in html
    assert plain(t).data.equals(t)  # shown at 2 decimals, not rounded


def test_section_shows_markdown_and_tables_in_order(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda x: shown.append(x))
    t = pd.DataFrame({"a": [1]})
    (Section(("**caption**",)) + Section((t, "after")))._ipython_display_()
    assert [type(x).__name__ for x in shown] == ["Markdown", "DataFrame", "Markdown"]
    assert shown[0].data == "**caption**" and shown[1] is t


def test_f2_spot_numbers_follow_the_committed_tables():
    n = hspot.f2_spot_numbers()
    spot = hspot.load_spot("hernandez-f2")
    assert spot is not None
    diag = hspot.spot_diagnosis(spot[0])
    assert n["spot_schedule_fell"] == len(diag) and n["spot_schedule_self"] >= len(diag)
    fall = diag["DM start (%)"] - diag["after training (%)"]  # rounded to 2 decimals in the table
    assert abs(n["spot_schedule_fall_min"] - fall.min()) < 0.01 and abs(n["spot_schedule_fall_max"] - fall.max()) < 0.01
    assert n["spot_lr_held"] <= n["spot_lr_self"]
    assert n["spot_random_far"] <= n["spot_random_below"] <= n["spot_random_self"]
    assert 0 <= n["spot_random_far_acc_min"] <= n["spot_random_far_acc_max"] <= 100


def test_f2_spot_numbers_are_nan_without_spot_checks(tmp_path):
    n = hspot.f2_spot_numbers(tmp_path)
    assert all(math.isnan(v) for v in n.values())
    assert hspot.spot_section(["hernandez-f2"], tmp_path).parts == (
        "No spot check committed (`benchmarks/spot/hernandez-f2.csv`).",)


def test_spot_section_captions_each_check():
    parts = hspot.spot_section(["hernandez-f2-lr0.001", "hernandez-f2-random-init"]).parts
    captions = [p for p in parts if isinstance(p, str)]
    assert len(parts) == 6 and len(captions) == 2
    assert captions[0].startswith("**Stitch lr 0.001, direct-matching start**")
    assert "random start" in captions[1] and "default" not in captions[1]


def test_diverge_table_says_which_variant_falls():
    spot = load_spot_json("hernandez-f2-diverge")
    t = hspot.diverge_table(spot)
    fall = t["DM start (%)"] - t["after training (%)"]
    assert ((fall > 100 * all_layers.CONTROL_FLOOR) == (t.verdict == "falls")).all()


def test_length_table_names_claims_by_their_text():
    longer = pd.DataFrame({"claim": ["connected_resnet18_x0_5"], "grid (points)": [1.234]})
    claims = [ClaimSpec(key="connected_resnet18_x0_5", text="ResNet-18 x0.5: connected",
                        criterion=at_most(1.234, 3.0, "max penalty"), paper="", ours="")]
    html = length.length_table(longer, claims).to_html()
    assert "ResNet-18 x0.5: connected" in html and "connected_resnet18_x0_5" not in html and "1.23" in html


def test_simclr_length_section_says_where_the_control_passes():
    parts = f3c_f6.simclr_length_section(["bansal-f6-simclr-epochs-w64"]).parts
    assert parts[0].startswith("**Width 64**") and parts[-1].startswith("The control passes from")
