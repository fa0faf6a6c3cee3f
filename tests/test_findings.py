"""The part beyond the papers opens with its findings: a hypothesis per row, a zoo per column,
every cell read from the scorecard's records."""

from stitchkit.papers import PAPER_BY_PART
from stitchkit.book.findings import findings_markdown


def _record(key, verdict, value, zoo_title="Bansal et al.: ResNet-18 seeds 0, 1", fid="X-1"):
    return {"part": "across", "id": fid, "page": f"across/{fid}.html", "claim_key": key,
            "claim": f"{zoo_title}: notions rank alike: or not", "verdict": verdict, "scale": "demo",
            "value": value, "low": value - 0.1, "high": value + 0.1, "unit": ""}


def test_one_row_per_hypothesis_one_column_per_zoo():
    records = [_record("alike_bansal", "reproduced", 0.6),
               _record("alike_smith", "not reproduced", 0.2, "Smith & Marcu: Digit ResNet-18 seeds 0, 1"),
               _record("other", "reproduced", 1.0),  # no zoo in its key: not a finding
               {**_record("alike_hernandez", "reproduced", 0.7), "part": "hernandez"}]  # another part
    md = findings_markdown(PAPER_BY_PART["across"], records)
    rows = [line for line in md.splitlines() if line.startswith("| {doc}`X-1")]
    assert len(rows) == 1
    assert "| Bansal 2021 |" in md and "| Smith 2024 |" in md and "Hernandez" not in md
    assert "`: notions rank alike: or not |" in rows[0]  # the zoo's title cut off, the text's own colon kept
    assert "{bdg-success}`reproduced` 0.60 \\[0.50, 0.70\\]" in rows[0]
    assert "{bdg-danger}`not reproduced` 0.20" in rows[0]
    assert "the verdict at `demo`" in md  # one scale, said once


def test_no_finding_before_a_page_has_run():
    assert findings_markdown(PAPER_BY_PART["across"], []) == ""


def test_a_page_of_claims_zoo_by_zoo_opens_with_a_grid_and_others_keep_their_list():
    from stitchkit.book.pages import GLANCE_CLASS, result_box

    def claim(key, verdict, value, title):
        return {"key": key, "text": f"{title}: notions rank alike", "paper": "p", "ours": "o", "verdict": verdict,
                "value": value, "low": value, "high": value, "unit": "%", "controls": []}

    zoo = [claim("alike_bansal", "reproduced", 80.0, "Bansal et al.: ResNet-18 seeds 0, 1"),
           claim("alike_balogh", "not reproduced", 20.0, "Balogh & Jelasity: ResNet-18 seeds 0, 1")]
    box = result_box({"scale": "demo", "claims": zoo})
    assert "| hypothesis | Bansal 2021 | Balogh 2025 |" in box
    assert "| notions rank alike | {bdg-success}`reproduced` 80% | {bdg-danger}`not reproduced` 20% |" in box
    plain = result_box({"scale": "demo", "claims": [claim("connected", "reproduced", 1.0, "t")]})
    assert plain.startswith(f":::{{admonition}} Results at a glance (scale demo)\n:class: {GLANCE_CLASS}\n- {{bdg-success}}") and "| hypothesis |" not in plain
