"""The part beyond the papers opens with its findings: a hypothesis per row, a zoo per column,
every cell read from the scorecard's records."""

from stitchkit.book.findings import findings_markdown
from stitchkit.registry.papers import PAPER_BY_PART


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


def _claim(fid, key, verdict, *, scale="demo", n_seeds=1, before=""):
    from stitchkit.registry.papers import paper_of

    paper = paper_of(fid)
    return {"id": fid, "part": paper.part, "page": f"{paper.part}/{fid}.html", "claim_key": key,
            "claim": f"the claim {key.replace('_', ' ')} of {fid}", "paper_value": "the paper's number",
            "ours": f"ours for {key.replace('_', ' ')}",
            "verdict": verdict, "scale": scale, "n_seeds": n_seeds, "verdict_before_amendment": before}


def test_what_we_found_names_each_papers_headline_claims_with_ours_and_the_verdict():
    """Issue 64, item 1: the landing page's first screen names each paper's headline claims with
    ours against the paper's, and the trust lines, all computed from the records."""
    from stitchkit.book.findings import found_markdown
    from stitchkit.registry.papers import PAPERS

    records = [_claim(*ref.split(":"), "reproduced" if i % 2 else "not reproduced", n_seeds=3 if i == 0 else 1)
               for p in PAPERS for i, ref in enumerate(p.headline)]
    acc = {"demo": ({"CIFAR-10": [60.0, 70.0, 80.0]}, 3, 3)}
    text = found_markdown(records, acc)
    for p in PAPERS:
        if p.beyond:
            continue
        assert p.headline, p.name  # every paper names its headline claims
        fid, key = p.headline[0].split(":")
        key = key.replace("_", " ")
        assert f"the claim {key} of {fid}" in text and f"ours for {key}" in text
    assert "**reproduced · demo**" in text and "**not reproduced · demo**" in text
    assert "at `demo` a median 70% (60-80%, 3 networks)" in text
    heads = sum(len(p.headline) for p in PAPERS)
    assert f"{sum(1 for p in PAPERS if p.headline)} of the {heads} verdicts' intervals carry" in text
    missing = found_markdown(records[1:], acc)
    assert "*(no run yet)*" in missing  # a headline claim without a run says so, never a typed value
