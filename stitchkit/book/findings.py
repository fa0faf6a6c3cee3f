"""What the part beyond the papers finds, at a glance: each of its hypotheses against each zoo.

The pages of a part marked ``beyond`` (:mod:`stitchkit.book.catalogue`) judge one hypothesis per zoo,
the claim's key ending in the zoo's name (``cka_dm_func_bansal``). :func:`findings_markdown`
turns the scorecard's records of such a part into one grid (:func:`stitchkit.book.pages.zoo_grid`),
a row per hypothesis and a column per zoo, each cell the verdict and the judged value with its
interval, all read from the results files: nothing in it is written by hand.
"""

from __future__ import annotations

from typing import Any

from ..papers import PAPER_BY_PART, Paper
from .pages import link, table, zoo_grid, zoo_of


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
