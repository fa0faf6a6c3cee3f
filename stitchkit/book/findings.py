"""What the book finds, at a glance: the landing page's "What we found" (:func:`found_markdown`:
each paper's headline claims with ours beside the paper's, and three trust lines), and the part
beyond the papers' grid of each of its hypotheses against each zoo (:func:`findings_markdown`).
Every value, verdict and count in them is read from the results files.

The pages of a part marked ``beyond`` (:mod:`stitchkit.book.catalogue`) judge one hypothesis per zoo,
the claim's key ending in the zoo's name (``cka_dm_func_bansal``). :func:`findings_markdown`
turns the scorecard's records of such a part into one grid (:func:`stitchkit.book.pages.zoo_grid`),
a row per hypothesis and a column per zoo, each cell the verdict and the judged value with its
interval, all read from the results files: nothing in it is written by hand.
"""

from __future__ import annotations

from statistics import median
from typing import Any, Mapping

from ..registry.figures import SCALES
from ..registry.papers import PAPER_BY_PART, PAPERS, Paper
from ..verdicts.results import badge_label
from . import amendments
from .pages import escape, link, table, zoo_grid, zoo_of


def judged_claims(records: list[dict[str, Any]], part: str | None = None) -> list[dict[str, Any]]:
    """The records that are a judged claim (a claim with a verdict), of one part where given."""
    return [r for r in records if r.get("claim") and r.get("verdict") and (part is None or r["part"] == part)]


def scale_gap_line(records: list[dict[str, Any]],
                   accuracies: Mapping[str, tuple[dict[str, list[float]], int, int]]) -> str:
    """The trust line on the networks: at each scale the verdicts ran at, the median (and range)
    test accuracy of its CIFAR-10 networks, beside what the papers state of theirs."""
    used = [s for s in SCALES if any(r.get("scale") == s for r in records)]
    parts = []
    for s in used:
        acc = (accuracies.get(s) or ({}, 0, 0))[0].get("CIFAR-10") or []
        if acc:
            parts.append(f"at `{s}` a median {median(acc):.0f}% ({min(acc):.0f}-{max(acc):.0f}%, {len(acc)} networks)")
    stated = "; ".join(f"{p.name}: {p.network_accuracy}" for p in PAPERS if p.network_accuracy)
    ours = ("The CIFAR-10 networks behind these verdicts that were trained on all 50,000 clean images to the end of "
            "their schedule reach " + ", ".join(parts) + " test accuracy"
            if parts else "No page's record of its CIFAR-10 networks says yet which were trained on all 50,000 clean "
            "images to the end of their schedule (the records made before they said so are on the Networks page)")
    return (f"**The networks.** {ours}; the papers' networks are better trained ({stated}; Bansal et al. and "
            "Balogh & Jelasity state none in their text; the {doc}`networks` page lists each network). A verdict holds "
            "for networks like ours, at the scale on its badge.")


def variance_line(records: list[dict[str, Any]]) -> str:
    """The trust line on the intervals: how many decided and inconclusive verdicts' intervals carry
    the network-to-network variance (several networks trained from other seeds)."""
    claims = judged_claims(records)
    several = sum(int(r.get("n_seeds") or 1) > 1 for r in claims)
    return (f"**The intervals.** {several} of the {len(claims)} verdicts' intervals carry the network-to-network "
            "variance (networks trained from several seeds); the others carry the test images' noise on one set of "
            "networks, and their pages say so ({{term}}`network-to-network variance`).")


def amended_line(records: list[dict[str, Any]]) -> str:
    """The trust line on the criteria: how many verdicts were judged again under an amendment made
    after runs had been seen (:mod:`stitchkit.book.amendments`), and how many it changed."""
    claims = judged_claims(records)
    again = [r for r in claims if amendments.before(r["id"], r.get("claim_key", ""), r.get("scale", ""))]
    moved = sum(bool(r.get("verdict_before_amendment")) for r in claims)
    dates = ", ".join(sorted(amendments.AMENDMENTS))
    return (f"**The criteria.** Each was written down before its page's first run, but {len(again)} of the "
            f"{len(claims)} verdicts were judged again after an {{term}}`amendment` ({dates}) made once earlier runs "
            f"had been seen; it changed {moved} of them, and each such page lists the change and the verdict before "
            "it.")


def found_markdown(records: list[dict[str, Any]],
                   accuracies: Mapping[str, tuple[dict[str, list[float]], int, int]], from_dir: str = "") -> str:
    """The landing page's "What we found": per paper its headline claims (:attr:`Paper.headline`)
    with the paper's value, ours and the verdict at its scale, then the three trust lines."""
    by_claim = {f"{r['id']}:{r.get('claim_key', '')}": r for r in records if r.get("claim_key")}
    body = []
    for paper in PAPERS:
        for ref in paper.headline:
            r = by_claim.get(ref)
            fid = ref.split(":", 1)[0]
            if r is None:
                body.append([paper.short, fid, "*(no run yet)*", "", "", ""])
                continue
            page = link(r["page"].removesuffix(".html"), fid, from_dir) if r.get("page") else fid
            body.append([paper.short, page, escape(r["claim"]), escape(str(r.get("paper_value", ""))),
                         escape(str(r.get("ours", ""))), f"**{badge_label(r['verdict'], r.get('scale', ''))}**"])
    return f"""**What we found.** Each paper's headline claims, the paper's value beside ours, and the verdict at
the scale it ran at (every claim of every page is on the {{doc}}`scorecard`):

:::{{container}} sk-found-table
{table(["paper", "page", "claim", "the paper", "ours", "verdict"], body)}
:::

- {scale_gap_line(records, accuracies)}
- {variance_line(records)}
- {amended_line(records)}
"""


def findings_markdown(paper: Paper, records: list[dict[str, Any]]) -> str:
    """The section "What this part finds" of a beyond part's index: per page and hypothesis
    (rows) the verdict in each zoo (columns) with the judged value, then a blank line; "" when
    no page has run."""
    mine = [r for r in records if r.get("part") == paper.part and r.get("claim_key") and zoo_of(r["claim_key"])]
    if not mine:
        return ""
    header, body = None, []
    for fid in dict.fromkeys(r["id"] for r in mine):
        claims = [{**r, "key": r["claim_key"], "text": r.get("claim", "")} for r in mine if r["id"] == fid]
        page = claims[0]["page"].removesuffix(".html") if claims[0].get("page") else None
        zoos, rows = zoo_grid(claims, label=lambda c, text: f"{link(page, fid, paper.part)}: {text}")
        header = header or zoos
        body += [[row[0], *(row[1 + zoos.index(z)] if z in zoos else "" for z in header)] for row in rows]
    scales = sorted({str(r.get("scale", "")) for r in mine})
    at = f"`{scales[0]}`" if len(scales) == 1 else "the scale its page ran at"
    return f"""## What this part finds

Each hypothesis of this part's pages (rows) on each paper's zoo (columns): the verdict at {at}
and the judged value with its 95% interval (pt: points; the criterion and the controls are on
the page). *Reproduced* means that the hypothesis holds on that zoo; a zoo's networks are its
paper's recipe at that scale, one pair of networks each.

:::{{container}} sk-findings-table
{table(["page: hypothesis", *(PAPER_BY_PART[z].short for z in header)], body)}
:::

"""
