"""What the part beyond the papers finds, at a glance: each of its hypotheses against each zoo.

The pages of a part marked ``beyond`` (:mod:`stitchkit.catalogue`) judge one hypothesis per zoo,
the claim's key ending in the zoo's name (``cka_dm_func_bansal``). :func:`findings_markdown`
turns the scorecard's records of such a part into one table, a row per hypothesis and a column
per zoo, each cell the verdict and the judged value with its interval, all read from the
results files: nothing in it is written by hand.
"""

from __future__ import annotations

from typing import Any, Mapping

from .catalogue import PAPER_BY_PART, Paper
from .pages import escape, link, table
from .results import badge_label

ZOOS = ("bansal", "hernandez", "smith", "balogh")  # the zoos, one per paper, named by the paper's part


def _family(key: str) -> tuple[str, str] | None:
    """(hypothesis, zoo) of a claim key ending in a zoo's name; None for any other key."""
    stem, _, zoo = key.rpartition("_")
    return (stem, zoo) if stem and zoo in ZOOS else None


def _num(x: float) -> str:
    """A judged value in at most three digits, so that a cell of the table stays narrow."""
    return f"{x:.0f}" if abs(x) >= 10 else f"{x:.1f}" if abs(x) >= 1 else f"{x:.2f}"


def _value(r: Mapping[str, Any]) -> str:
    if r.get("value") in ("", None):
        return ""
    unit = {"points": " pt", "%": "%"}.get(r.get("unit") or "", f" {r['unit']}" if r.get("unit") else "")
    if r["low"] == r["high"] == r["value"]:
        return f"{_num(r['value'])}{unit}"
    return f"{_num(r['value'])} [{_num(r['low'])}, {_num(r['high'])}]{unit}"


def findings_markdown(paper: Paper, records: list[dict[str, Any]], badge) -> str:
    """The section "What this part finds" of a beyond part's index: per page and hypothesis
    (rows) the verdict in each zoo (columns) with the judged value, then a blank line; "" when
    no page has run.
    ``badge``: the book's badge maker (verdict, label) -> MyST."""
    mine = [r for r in records if r.get("part") == paper.part and r.get("claim_key") and _family(r["claim_key"])]
    if not mine:
        return ""
    rows: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    for r in mine:
        stem, zoo = _family(r["claim_key"])
        rows.setdefault((r["id"], stem), {})[zoo] = r
    zoos = [z for z in ZOOS if any(z in cells for cells in rows.values())]
    body = []
    for (fid, _), cells in rows.items():
        first = next(iter(cells.values()))
        claim = str(first.get("claim", "")).split(": ", 2)[-1]  # after the zoo's title, "Paper: networks: "
        row = [link(first["page"].removesuffix(".html") if first.get("page") else None, fid, paper.part)
               + ": " + escape(claim)]
        for z in zoos:
            r = cells.get(z)
            row.append("" if r is None else f"{badge(r['verdict'], badge_label(r['verdict']))} {escape(_value(r))}")
        body.append(row)
    header = ["page: hypothesis", *(PAPER_BY_PART[z].short for z in zoos)]
    scales = sorted({str(r.get("scale", "")) for r in mine})
    at = f"`{scales[0]}`" if len(scales) == 1 else "the scale its page ran at"
    return f"""## What this part finds

Each hypothesis of this part's pages (rows) on each paper's zoo (columns): the verdict at {at}
and the judged value with its 95% interval (pt: points; the criterion and the controls are on
the page). *Reproduced* means that the hypothesis holds on that zoo; a zoo's networks are its
paper's recipe at that scale, one pair of networks each.

:::{{container}} sk-findings-table
{table(header, body)}
:::

"""
