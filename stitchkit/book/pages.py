"""Rendering one executed page: the MyST pieces the generated pages share (escaped text, links,
tables, times), the boxes of every page (the verdicts at a glance that open it; the run's
provenance and the commands that rerun it, folded under its main figure), the tidying of an executed notebook (collapsed code and parameters,
the claims table tagged, stderr moved to the terminal), the glossary terms linked at their first
use, and the re-rendering of committed pages from their results files (:func:`link_pages`).

:mod:`stitchkit.book.execution` puts these on each page it executes; :mod:`stitchkit.book.bookpages` calls
:func:`link_pages` when it writes the book.
"""

from __future__ import annotations

from collections import Counter
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..base import paths
from ..base.fileio import atomic_write_text
from ..registry.figures import config_class, scales_of
from ..registry.papers import PAPER_BY_PART, ZOOS
from ..registry.scales import ParameterValueError, validate
from ..registry.staleness import behind_reason
from ..verdicts.gating import gating_failures, why_kind
from ..verdicts.results import badge_label, claims_html, why_failed
from . import amendments, changes, replicated
from .catalogue import Page, empty_cache_seconds, minutes, smoke_times, visible

# --------------------------------------------------------------------------------------------
# Markdown pieces


def escape(text: Any) -> str:
    """``text`` as literal MyST inline text inside a table cell (no markup, no math, no pipes)."""
    return re.sub(r"([\\`*_$<>\[\]|{}])", r"\\\1", str(text)).replace("\n", " ")


def link(doc: str | None, text: str, from_dir: str) -> str:
    """``{doc}`` link to ``doc`` (relative to the book dir) from a page in ``from_dir``."""
    if not doc:
        return escape(text)
    text = re.sub(r"[`<>]", "", str(text))  # role content is literal: strip what would end it
    target = doc[len(from_dir) + 1:] if from_dir and doc.startswith(from_dir + "/") else (
        "../" * len(Path(from_dir).parts) + doc)
    return f"{{doc}}`{text} <{target}>`"


def table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The boxes under the title of an executed page, and its tidying


def page_boxes(results: Mapping[str, Any], beside: list[Mapping[str, Any]] = (),
               counted: Mapping[str, Any] | None = None) -> str:
    """The box that opens every page, in one cell: the verdicts at a glance (with those of
    ``beside``, runs at other scales kept beside the page). ``counted``: a run beside the page
    that the scorecard counts instead of the page's own (:func:`counted_beside`): its verdicts
    open the page, the page's own beside each, with a note saying why. The run's provenance and
    the commands that rerun it fold under the page's main figure (:func:`run_boxes`)."""
    if counted is None:
        return result_box(results, beside)
    others = [results, *(b for b in beside if b is not counted)]
    date = str((results.get("provenance") or {}).get("date") or "?")[:10]
    note = (f"The figures and text below are this figure's `{results.get('scale')}` run of {date}, made from an "
            f"earlier version of its notebook, under rules since retired. The verdicts that count are those "
            f"of its current `{counted.get('scale')}` run, here; the `{results.get('scale')}` run's are beside "
            f"each (*also at {results.get('scale')}*) until a `{results.get('scale')}` machine runs the "
            "notebook again.")
    return f":::{{note}}\n{note}\n:::\n\n" + result_box(counted, others)


# The tag of the cell that holds a page's run provenance and rerun commands (:func:`run_boxes`),
# each folded, under the page's main figure (issue 64: "Provenance, rerun ... go into folds below").
RUN_TAG = "sk-run"


def run_boxes(results: Mapping[str, Any]) -> str:
    """The run's provenance (:func:`provenance_banner`) and the commands that rerun the page
    (:func:`rerun_box`, with measured times), each a closed fold whose title says what it holds:
    they stand under the page's main figure, so that the figure follows the verdicts."""
    return provenance_banner(results) + "\n\n" + rerun_box(results)


def counted_beside(results: Mapping[str, Any], beside: list[Mapping[str, Any]], source: Path) -> Mapping[str, Any] | None:
    """The run kept beside a page that the scorecard counts instead of the page's own, or None:
    where the page's run was made from an earlier version of its notebook (``source``) and a run
    beside it from the current one, the highest-scale such run (the rule of
    :func:`stitchkit.book.catalogue.counted_runs`)."""
    from ..registry.figures import SCALES
    from .catalogue import source_hash

    if not source.exists():
        return None
    current = source_hash(source)
    if results.get("source_sha256") == current:
        return None
    rank = {sc: i for i, sc in enumerate(SCALES)}
    fresh = [b for b in beside if b.get("source_sha256") == current]
    return max(fresh, key=lambda b: rank.get(b.get("scale"), -1)) if fresh else None


def put_under_title(nb, markdown: str) -> None:
    """Insert ``markdown`` as its own cell directly under the page title (the first line of the
    first cell), so that a page opens with its verdicts; the rest of that cell follows it."""
    import nbformat

    first = nb.cells[0]
    title, _, rest = first.source.partition("\n")
    if first.cell_type != "markdown" or not title.startswith("# "):
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(markdown))
        return
    first.source = title
    nb.cells[1:1] = [nbformat.v4.new_markdown_cell(markdown)] + ([nbformat.v4.new_markdown_cell(rest.strip("\n"))]
                                                                  if rest.strip() else [])


# The tag (a CSS class tag_sk-claims on the page) of the cell that shows a page's claims table:
# on a phone its rows become cards (book/_static/stitchkit.css).
CLAIMS_TAG = "sk-claims"


def tag_claims_table(nb) -> bool:
    """Tag the code cell that shows the claims table (``run.claims_table()``) with
    :data:`CLAIMS_TAG`; returns whether a tag was added."""
    added = False
    for cell in nb.cells:
        if cell.cell_type == "code" and "claims_table()" in cell.source:
            tags = cell.metadata.setdefault("tags", [])
            if CLAIMS_TAG not in tags:
                tags.append(CLAIMS_TAG)
                added = True
    return added


HIDDEN = ("hide-cell", "hide-input", "remove-input", "remove-cell")


def hide_code(nb) -> bool:
    """Collapse the source of every code cell behind the book's "show code" toggle (tag
    ``hide-input``): a page opens with its evidence (text, tables, figures), its code one click
    away. Returns whether a tag was added."""
    added = False
    for cell in nb.cells:
        if cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            if not any(t in tags for t in HIDDEN):
                tags.append("hide-input")
                added = True
    return added


def tidy_page(nb) -> None:
    """Collapse the parameter cells and the code (:func:`hide_code`), tag the claims table
    (:func:`tag_claims_table`) and move stderr output (warnings) from the page to the terminal."""
    tag_claims_table(nb)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            cell.metadata["tags"] = [*tags, "hide-cell"] if "hide-cell" not in tags else tags
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                print(out.get("text", ""), end="", file=sys.stderr)
                continue
            kept.append(out)
        cell["outputs"] = kept
    hide_code(nb)


VERDICT_BADGES = {"reproduced": "success", "not reproduced": "danger", "inconclusive at this scale": "warning",
                  "not assessed at smoke scale": "secondary"}


# The glance box's classes: the theme's "tip" look, and sk-glance, which lays out its list of
# claims (badge and claim, then ours and the paper's value, then why a verdict is inconclusive) as
# compact blocks at every width (book/_static/stitchkit.css).
GLANCE_CLASS = "tip sk-glance"
GLANCE_GRID_CLASS = "tip sk-glance-grid"  # the grid of a page whose claims are made zoo by zoo: no phone cards


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# A claim made on each zoo of the part beyond the papers (papers.ZOOS) has the zoo's name as
# the last part of its key ("cka_dm_func_bansal").


def zoo_of(key: str) -> tuple[str, str] | None:
    """(hypothesis, zoo) of a claim key ending in a zoo's name; None for any other key."""
    stem, _, zoo = str(key).rpartition("_")
    return (stem, zoo) if stem and zoo in ZOOS else None


def _short(x: float) -> str:
    """A judged value in at most three digits, so that a cell of a grid stays narrow."""
    return f"{x:.0f}" if abs(x) >= 10 else f"{x:.1f}" if abs(x) >= 1 else f"{x:.2f}"


def judged_short(c: Mapping[str, Any]) -> str:
    """A claim's judged value and interval in a few characters: ``0.54 [0.49, 0.58]``, ``67%``."""
    if c.get("value") in ("", None):
        return ""
    unit = {"points": " pt", "%": "%"}.get(c.get("unit") or "", f" {c['unit']}" if c.get("unit") else "")
    if c["low"] == c["high"] == c["value"]:
        return f"{_short(c['value'])}{unit}"
    return f"{_short(c['value'])} [{_short(c['low'])}, {_short(c['high'])}]{unit}"


def zoo_grid(claims: list[Mapping[str, Any]], label=None,
             moved: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[list[str], list[list[str]]] | None:
    """Claims made zoo by zoo (every key ending in a zoo's name) as a grid: a row per hypothesis
    (its text after the zoo's title, "Paper: networks: "), a column per zoo, each cell the verdict's
    badge and the judged value (:func:`judged_short`). ``claims``: dicts with key, text, verdict,
    value, low, high, unit; ``label(claim, text)``: the row's first cell (default: the text);
    ``moved``: claim key -> the verdict a replaced run gave it (``previous_run``'s claims), shown
    in its cell. None unless every claim is made on a zoo."""
    if not claims or not all(zoo_of(c.get("key", "")) for c in claims):
        return None
    rows: dict[str, dict[str, Mapping[str, Any]]] = {}
    for c in claims:
        stem, zoo = zoo_of(c["key"])
        rows.setdefault(stem, {})[zoo] = c
    zoos = [z for z in ZOOS if any(z in cells for cells in rows.values())]
    body = []
    for cells in rows.values():
        first = next(iter(cells.values()))
        text = escape(str(first.get("text", "")).split(": ", 2)[-1])
        row = [label(first, text) if label else text]
        for z in zoos:
            c = cells.get(z)
            badge = VERDICT_BADGES.get(c["verdict"], "secondary") if c else ""
            short = badge_label(c["verdict"]).replace("`", "") if c else ""
            was = (moved or {}).get(c["key"]) if c else None
            before = f" (the replaced run: {badge_label(was['verdict']).replace('`', '')})" if was else ""
            row.append(f"{{bdg-{badge}}}`{short}` {escape(judged_short(c))}{escape(before)}" if c else "")
        body.append(row)
    return zoos, body


# An "ours" text longer than this is shortened in the glance box (:func:`ours_head`); the whole
# text is in the fold under the box.
OURS_SHORT = 90
_INTERVAL = re.compile(r"\[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]")


def _segments(text: str) -> list[str]:
    """``text`` split at its top-level "; " (not inside brackets or parentheses)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if depth == 0 and text.startswith("; ", i):
            parts.append(text[start:i])
            start = i + 2
    return parts + [text[start:]]


def _states_interval(segment: str, low: Any, high: Any) -> bool:
    """Whether ``segment`` prints the interval [low, high] (to the digits it prints)."""
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return False
    for a, b in _INTERVAL.findall(segment):
        tol = [0.5 * 10 ** -len(x.partition(".")[2]) + 1e-9 for x in (a, b)]
        if abs(float(a) - low) <= tol[0] and abs(float(b) - high) <= tol[1]:
            return True
    return False


def ours_head(claim: Mapping[str, Any]) -> str:
    """A claim's "ours" text as the glance box shows it: whole when short (:data:`OURS_SHORT`);
    otherwise its first part (up to the first top-level "; ") and the part that states the judged
    interval, where another does, with "…" for each part left out. The judged interval is never
    left out; the whole text is in the fold under the box."""
    text = str(claim.get("ours", ""))
    parts = _segments(text)
    if len(text) <= OURS_SHORT or len(parts) == 1:
        return text
    kept = [0] + [i for i, part in enumerate(parts[1:], 1) if _states_interval(part, claim.get("low"), claim.get("high"))]
    out = []
    for i, part in enumerate(parts):
        if i in kept:
            out.append(part)
        elif not out or out[-1] != "…":
            out.append("…")
    return "; ".join(out)


def result_box(results: Mapping[str, Any], beside: list[Mapping[str, Any]] = ()) -> str:
    """The admonition that opens every page: each claim, the paper's value, ours, the verdict; a
    page whose claims are made zoo by zoo (the part beyond the papers) shows them as a grid, a
    hypothesis per row and a zoo per column (:func:`zoo_grid`). ``beside``: the results of runs
    at other scales kept beside the page (``<ID>.<scale>.results.json``): each claim lists their
    verdict and value under the page's own, so the evidence of every scale sits side by side,
    the page's (its highest scale) first."""
    claims = results.get("claims", [])
    if not claims:
        role = results.get("role") or "This page shows the data the other pages use"
        return (f":::{{admonition}} Results at a glance (scale {results['scale']})\n:class: tip\n"
                f"{role.rstrip('.')}; it makes no claim of its own.\n:::")
    previous = (results.get("provenance") or {}).get("previous_run") or {}
    grid = zoo_grid(claims, moved=previous.get("claims"))
    if grid is not None:
        header = ["hypothesis", *(PAPER_BY_PART[z].short for z in grid[0])]
        return (f":::{{admonition}} Results at a glance (scale {results['scale']})\n:class: {GLANCE_GRID_CLASS}\n"
                + table(header, grid[1])
                + "\n\nEach cell: the verdict on that paper's zoo and the judged value with its 95% interval "
                  "(pt: points). The criteria, the paper each hypothesis comes from, and why a verdict is "
                  "inconclusive are under *Claims* below; a verdict that moved when this run replaced "
                  "an earlier one names the earlier verdict (see *Run provenance*).\n:::")
    items, notes = [], []
    for c in claims:
        badge = VERDICT_BADGES.get(c["verdict"], "secondary")
        failed = gating_failures(c)
        why = "; ".join(why_failed(k) for k in failed) if failed else (c.get("reason") or "")
        label = badge_label(c["verdict"], c.get("scale") or results["scale"]).replace("`", "")
        kind = why_kind(c["verdict"], failed, c.get("holds"))
        head = f"{{bdg-{badge}}}`{label}` {_cell(c['text'])}"
        items.append(head + (f" · *{kind}*" if kind in WHY_SHOWN else "")
                     + f"\n\n  **ours** {_cell(ours_head(c))} · **paper** {_cell(c['paper'])}")
        note = []  # ours in full, why, and what moved the verdict: folded under the box (GLANCE_WHY)
        if ours_head(c) != str(c.get("ours", "")):
            note.append(f"*ours in full:* {_cell(c['ours'])}")
        if why:
            note.append(f"*why:* {_cell(why)}")
        prior = amendments.changed(results.get("id", ""), c, c.get("scale") or results["scale"])
        if prior is not None:  # a verdict an amendment changed: the earlier one beside it
            p_label = badge_label(prior["verdict"], c.get("scale") or results["scale"]).replace("`", "")
            note.append(f"*before the amendment of {prior['date']}:* "
                        f"{{bdg-{VERDICT_BADGES.get(prior['verdict'], 'secondary')}}}`{p_label}` "
                        f"{_cell(amendments.describe(prior))} (see *Changes after a run*)")
        was = previous.get("claims", {}).get(c.get("key"))
        if was is not None:  # a re-run moved this verdict: the run it replaced beside it
            w_label = badge_label(was["verdict"], c.get("scale") or results["scale"]).replace("`", "")
            note.append(f"*in the run this one replaced ({str(previous.get('date') or '?')[:10]}):* "
                        f"{{bdg-{VERDICT_BADGES.get(was['verdict'], 'secondary')}}}`{w_label}` {_cell(was['ours'])} "
                        "(see *Run provenance*)")
        for other in beside:
            o = next((x for x in other.get("claims", []) if x.get("key") == c.get("key")), None)
            if o is not None:
                o_label = badge_label(o["verdict"], o.get("scale") or other.get("scale", "")).replace("`", "")
                note.append(f"*also at {other.get('scale', '?')}:* "
                            f"{{bdg-{VERDICT_BADGES.get(o['verdict'], 'secondary')}}}`{o_label}` {_cell(o['ours'])}")
        if note:
            notes.append(f"- {head}\n\n" + "\n\n".join(f"  {n}" for n in note))
    shown, more = items[:GLANCE_SHOWN], items[GLANCE_SHOWN:]
    box = (f":::{{admonition}} Results at a glance (scale {results['scale']})\n:class: {GLANCE_CLASS}\n"
           + "\n".join(f"- {i}" for i in shown)
           + (f"\n\nThis page judges {len(items)} claims: the first {len(shown)} are above, the other {len(more)} "
              "fold under the box." if more else "")
           + "\n\nEach verdict follows from its criterion (see *Claims* below); a criterion changed after a run is "
             "listed, dated, under *Changes after a run*.\n:::")
    if more:
        counts = Counter(c["verdict"] for c in claims[GLANCE_SHOWN:])
        tally = ", ".join(f"{n} {v}" for v, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        box += (f"\n\n:::{{dropdown}} {len(more)} more verdict{'s' if len(more) != 1 else ''} of this page ({tally})"
                f"\n:class-container: {GLANCE_MORE_CLASS}\n" + "\n".join(f"- {i}" for i in more) + "\n:::")
    if not notes:
        return box
    title = GLANCE_WHY + (GLANCE_FULL if any("*ours in full:*" in n for n in notes) else "")
    return (box + f"\n\n:::{{dropdown}} {title}\n:class-container: sk-glance-why\n" + "\n".join(notes)
            + "\n:::")


# The verdicts at a glance stay compact, so that the page's main figure follows within two screens
# (issue 64): an inconclusive verdict names its kind of reason beside its claim (WHY_SHOWN), and
# the reasons in full, with what moved a verdict (an amendment, a re-run, a run at another scale)
# and each of our values that the box shortened (ours_head), fold into one click under the box.
WHY_SHOWN = ("within noise", "failed control", "failed premise", "not measured")
# a page that judges more claims shows its first GLANCE_SHOWN in the box (the page's order: its main
# claims first) and folds the rest, counted by verdict, right under it (a phone shows the figure
# within two screens too)
GLANCE_SHOWN = 5
GLANCE_MORE_CLASS = "sk-glance-more"
GLANCE_WHY = "Why each verdict is what it is and what moved it"
GLANCE_FULL = ", and our values in full"  # added to its title where the box shortened a value (ours_head)


def _precision(p: Mapping[str, Any]) -> str:
    """'bf16 training, fp32 measurement' (pages run before measurements were always fp32 say only
    the precision they ran in)."""
    train, measure = p.get("precision", "?"), p.get("measure_precision")
    return f"{train} training, {measure} measurement" if measure else train


def _networks_text(provenance: Mapping[str, Any]) -> str:
    """" · **networks** …": how many trained networks the run used and their test accuracies
    (runs before the record existed: nothing)."""
    acc = sorted(100 * float(n["accuracy"]) for n in provenance.get("networks") or ()
                 if n.get("trained") and n.get("accuracy") is not None)
    if not acc:
        return ""
    span = f"{acc[0]:.1f}%" if len(acc) == 1 else f"{acc[0]:.1f}-{acc[-1]:.1f}%"
    return f" · **networks** {len(acc)} trained, test accuracy {span}"


def previous_run_text(results: Mapping[str, Any]) -> str:
    """The banner's paragraph on the run a re-run replaced without reproducing it (the provenance's
    ``previous_run``): when it was made, how many values changed, which verdicts moved, and which
    networks were trained again with another test accuracy; "" when there is none."""
    prev = (results.get("provenance") or {}).get("previous_run")
    if not prev:
        return ""
    text = {c.get("key"): c.get("text", c.get("key")) for c in results.get("claims", [])}
    verdict = {c.get("key"): c["verdict"] for c in results.get("claims", [])}
    moved = [f"*{_cell(text.get(k, k))}* {was['verdict']} → {verdict.get(k, '?')}"
             for k, was in prev.get("claims", {}).items()]
    nets = [f"{n['model']} seed {n['seed']} {100 * n['before']:.2f}% → {100 * n['after']:.2f}%"
            for n in prev.get("networks", ())]
    out = (f"**Re-run**: this run replaced one made on {str(prev.get('date') or '?')[:10]} at commit "
           f"`{str(prev.get('commit') or 'unknown')[:10]}` on {prev.get('device') or 'an unrecorded device'}, "
           f"and changed {prev.get('changed', '?')} of its values; "
           + (f"verdicts that moved: {'; '.join(moved)}." if moved else "no verdict moved."))
    if nets:
        out += (" Its networks were trained again from the same specification and reached another test accuracy "
                f"({', '.join(nets)}).")
    return out + "\n\n"


def page_times(results: Mapping[str, Any], *, device: bool = True) -> str:
    """A page's one time figure, in two labelled parts, the same in its provenance and its rerun
    box (issue 64): the run's wall time as run (reading from the cache whatever earlier runs had
    computed), and the estimate from an empty cache
    (:func:`stitchkit.book.catalogue.empty_cache_seconds`: the run less what it computed, plus the
    recorded compute time of every cached piece it used; "at least" where a piece recorded none).
    ``device``: name the machine (the provenance names it apart)."""
    prov = results.get("provenance") or {}
    wall = prov.get("wall_seconds")
    if wall is None:
        return "not recorded"
    out = f"measured {minutes(wall)} as run" + (f" on {prov.get('device') or 'an unrecorded device'}" if device else "")
    cache = prov.get("cache")
    if not isinstance(cache, dict):
        return out + " (the run kept no record of its cache: no estimate from an empty cache)"
    cold, missing = empty_cache_seconds([Page(results.get("id", ""), "", results, None)])
    return out + f", {'at least' if missing else 'about'} {minutes(cold)} from an empty cache"


def provenance_banner(results: Mapping[str, Any]) -> str:
    """The run's provenance, a closed fold under the page's main figure (:func:`run_boxes`) whose
    title names the run's scale and date, and says when the page is behind its code."""
    p = results["provenance"]
    commit = (p.get("commit") or "unknown")[:10] + (" + uncommitted changes" if p.get("dirty") else "")
    first = p.get("first_run") or {}
    again = (f" · a re-run from the cache that reproduced the run of {str(first.get('date') or '?')[:10]} at commit "
             f"`{str(first.get('commit') or 'unknown')[:10]}` bit for bit" if first.get("wall_seconds") is not None
             else "")
    behind = behind_reason(results, paths.NOTEBOOKS_DIR / f"{results['id']}.py")
    title = (f"Run provenance: the {results['scale']} run of {p.get('date', '?')[:10]}"
             + ("; behind its code" if behind else ""))
    return (f"```{{admonition}} {title}\n:class: note dropdown\n"
            f"**Scale** `{results['scale']}` · **commit** `{commit}` · **device** {p.get('device')} · "
            f"**precision** {_precision(p)} · "
            f"**time** {page_times(results, device=False)}{again} · **date** {p.get('date', '?')[:10]}{_networks_text(p)}\n\n"
            + previous_run_text(results)
            + (f"**Behind the code**: {behind}; `make rerun` re-runs it.\n\n" if behind else "")
            + f"Rerun: `stitchkit run {results['id']} --scale {results['scale']}`. "
            "Every number on this page was computed by that run.\n```")


# --------------------------------------------------------------------------------------------
# The rerun box of an executed page


def _sweep_example(figure_id: str, params: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """A parameter of the page and two values for it that the CLI accepts: the page's own value
    and another. Integers come first (the value and its double), then floats, then booleans and
    fields with a fixed set of choices. A config may name its own example instead, as a class
    attribute ``SWEEP_EXAMPLE = (parameter, (values...))`` (X-1: the zoos). Values are checked
    against the figure's config (:func:`stitchkit.registry.figures.config_class`), for an ID not
    registered only by type."""
    cls = config_class(figure_id)

    def ok(name: str, values: list[Any]) -> bool:
        if cls is None:
            return True
        try:
            return all(validate(cls, name, v) is not None for v in values)
        except (ParameterValueError, KeyError, TypeError):
            return False

    def choices(name: str) -> tuple:
        if cls is None:
            return ()
        import dataclasses

        field = {f.name: f for f in dataclasses.fields(cls)}.get(name)
        return tuple(field.metadata.get("choices") or ()) if field else ()

    candidates: list[tuple[int, str, list[Any]]] = []
    own = getattr(cls, "SWEEP_EXAMPLE", None)
    if own is not None:
        candidates.append((-1, own[0], list(own[1])))
    for name, v in params.items():
        if isinstance(v, bool):
            candidates.append((2, name, [v, not v]))
        elif isinstance(v, int) and v > 0:
            other = [c for c in choices(name) if c != v]
            candidates.append((0, name, [v, other[0] if other else 2 * v]))
        elif isinstance(v, float) and v > 0:
            candidates.append((1, name, [v, v * 2]))
        elif isinstance(v, str) and len(choices(name)) > 1:
            candidates.append((3, name, [v, next(c for c in choices(name) if c != v)]))
    for _, name, values in sorted(candidates, key=lambda c: c[0]):
        if ok(name, values):
            return name, values
    return None


def _cli(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def rerun_box(results: Mapping[str, Any]) -> str:
    """A collapsed MyST admonition with the commands that rerun the page at each scale and sweep
    one of its parameters (``.venv/bin/stitchkit run ID --scale S``,
    ``.venv/bin/stitchkit sweep ID --scale demo -p PARAM V1 V2``), ready to copy."""
    fid, scale = results["id"], results.get("scale")
    where = {"smoke": "tiny networks; assesses no claim", "demo": "2 CPU cores",
             "gpu": "one GPU (`stitchkit pages ID --scale gpu --pack F` packs it for `stitchkit import-pages F`)",
             "paper": "the paper's settings, on a GPU cluster"}
    measured = page_times(results)
    smoke = smoke_times().get(fid)
    timed = {scale: measured}
    if smoke and scale != "smoke":  # benchmarks/smoke_times.py: every page from an empty cache
        timed["smoke"] = (f"measured {minutes(smoke.get('seconds'))} from an empty cache on "
                          f"{smoke.get('device') or 'unknown'} ({smoke.get('date', '')})")
    run_lines = []
    for s in scales_of(fid):
        run_lines += [f"# {s}: {where[s]}; " + timed.get(s, "not timed for this page yet"),
                      f".venv/bin/stitchkit run {fid} --scale {s}"]
    example = _sweep_example(fid, results.get("params") or {})
    if example:
        name, values = example
        sweep = (f".venv/bin/stitchkit sweep {fid} --scale demo -p {name} {' '.join(_cli(v) for v in values)}")
    else:
        sweep = f".venv/bin/stitchkit sweep {fid} --scale demo -p PARAM V1 V2"
    return ("````{admonition} Rerun this page\n:class: seealso dropdown\n"
            "Each command writes a new run under `runs/`, never over the book. At each scale:\n\n"
            "```bash\n" + "\n".join(run_lines) + "\n```\n\n"
            "Sweep one parameter (one run per value, collected into one `results.csv`):\n\n"
            f"```bash\n{sweep}\n```\n\n"
            f"`.venv/bin/stitchkit list {fid}` shows every parameter of {fid} with its meaning; "
            f"`make book SCALE=paper` re-executes every page of the book.\n````")


# --------------------------------------------------------------------------------------------
# Glossary terms linked at their first use on each page

# (term in the glossary, pattern of its uses in prose); scale and verdict names are left alone
# ("paper" and "control" are everyday words too; verdicts stand in badges).
GLOSSARY_TERMS: tuple[tuple[str, str], ...] = (
    ("sender", r"senders?"), ("receiver", r"receivers?"), ("cut", r"cuts?"), ("stitch", r"stitch(?:es)?(?! points?)"),
    ("penalty", r"(?:stitching )?penalt(?:y|ies)"), ("points", r"(?<!stitch )points"), ("direct matching", r"direct matching"),
    ("task-loss matching", r"task-loss matching"), ("stem", r"stem"), ("block", r"blocks?"),
    ("CKA", r"(?<![\w-])CKA(?![\w-])"), ("PWCCA", r"PWCCA"), ("AUROC", r"AUROCs?"), ("OOD", r"OOD"), ("OPD", r"OPD"),
)
# spans where a term must not be linked: code, maths, links and roles
_PROTECTED = re.compile(r"(`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\[[^\]]*\]\([^)]*\)|\{[\w:-]+\}`[^`]*`)")


def link_terms(text: str, seen: set[str]) -> str:
    """``text`` (one markdown cell) with the first use of each glossary term not in ``seen``
    turned into a ``{term}`` link; ``seen`` is updated. Headings, fenced blocks (directives,
    admonitions, figure captions), code, maths, links and existing roles are left alone."""
    seen.update(t for t, _ in GLOSSARY_TERMS if re.search(r"\{term\}`[^`]*<?" + re.escape(t) + r">?`", text))
    out, fence = [], None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            out.append(line)
            continue
        if stripped.startswith(("```", ":::")):
            fence = stripped[:3]
            out.append(line)
            continue
        if stripped.startswith("#") and not stripped.startswith("#!"):
            out.append(line)
            continue
        parts = _PROTECTED.split(line)
        for k in range(0, len(parts), 2):  # even parts are prose
            for term, pattern in GLOSSARY_TERMS:
                if term in seen:
                    continue
                m = re.search(rf"(?<![\w`{{<-]){pattern}(?![\w>-])", parts[k], flags=re.IGNORECASE)
                if m:
                    word = m.group(0)
                    role = f"{{term}}`{word}`" if word.lower() == term else f"{{term}}`{word} <{term}>`"
                    parts[k] = parts[k][:m.start()] + role + parts[k][m.end():]
                    seen.add(term)
        out.append("".join(parts))
    return "\n".join(out)


def link_glossary(nb) -> None:
    """Link each glossary term at its first use in the prose of a page (an executed notebook);
    the title cell and the result and provenance boxes are skipped. Idempotent."""
    seen: set[str] = set()
    for n, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or n < 2:
            continue
        cell.source = link_terms(cell.source, seen)


GLANCE_START = ":::{admonition} Results at a glance"


def _is_boxes(cell) -> bool:
    """Whether ``cell`` is the one that opens a page with its verdicts (:func:`page_boxes`)."""
    return cell.cell_type == "markdown" and (cell.source.startswith(GLANCE_START) or
                                             cell.source.startswith(":::{note}\nThe figures and text below are"))


def refresh_boxes(nb, results: Mapping[str, Any], beside: list[Mapping[str, Any]] = (),
                  counted: Mapping[str, Any] | None = None) -> None:
    """Re-render the boxes of an executed page from its results file: the verdicts at a glance
    that open it (:func:`page_boxes`) and the folded provenance and rerun commands
    (:func:`run_boxes`, a cell tagged :data:`RUN_TAG`, put directly under the verdicts where it is
    missing; :func:`figure_first` then puts the main figure between them), so that a page executed
    before a change of the boxes reads like a new one; every number in them is the results
    file's."""
    import nbformat

    at = next((i for i, c in enumerate(nb.cells) if _is_boxes(c)), None)
    if at is None:
        return
    nb.cells[at].source = page_boxes(results, beside, counted)
    run = next((c for c in nb.cells if RUN_TAG in c.metadata.get("tags", [])), None)
    if run is None:  # a page rendered when its boxes were one cell: they go into their own
        run = nbformat.v4.new_markdown_cell("")
        run.metadata["tags"] = [RUN_TAG]
        nb.cells.insert(at + 1, run)
    run.source = run_boxes(results)


# The tag of the cell that holds a page's main figure, moved under the boxes that open the page
# (:func:`figure_first`).
MAIN_FIGURE_TAG = "sk-main-figure"
_GLUE_FIGURE = re.compile(r"^(`{3,}|:{3,})\{glue:figure\}[ \t]+\S+.*$", re.M)


def figure_first(nb) -> bool:
    """Move a page's main figure, the first ``{glue:figure}`` below the boxes that open it, into
    its own cell directly under those boxes (issue 64: the figure within the first two screens,
    after the verdicts it supports). Where it stood, a line links to it, so that its section still
    points at its evidence. The figure's data stays where it was computed (myst-nb reads a page's
    glued outputs before rendering any cell). Idempotent; True if the page changed. A page without
    a figure, or without the boxes, is left as it is."""
    import nbformat

    at = next((i for i, c in enumerate(nb.cells) if _is_boxes(c)), None)
    if at is None:
        return False
    moved = next((i for i, c in enumerate(nb.cells) if MAIN_FIGURE_TAG in c.metadata.get("tags", [])), None)
    if moved is not None:
        if moved == at + 1:
            return False
        fig = nb.cells.pop(moved)
        nb.cells.insert(next(i for i, c in enumerate(nb.cells) if _is_boxes(c)) + 1, fig)
        return True
    for cell in nb.cells[at + 1:]:
        m = _GLUE_FIGURE.search(cell.source) if cell.cell_type == "markdown" else None
        if m is None:
            continue
        fence = m.group(1)
        close = re.compile(rf"^{re.escape(fence)}[ \t]*$", re.M).search(cell.source, m.end())
        if close is None:
            return False  # not a block this function can read: leave the page as it is
        block = cell.source[m.start():close.end()]
        name = re.search(r"^:name:[ \t]+(\S+)", block, re.M)
        pointer = ("*This section's figure is the page's first, under its verdicts"
                   + (f": {{ref}}`the figure <{name.group(1)}>`" if name else "") + ".*")
        cell.source = (cell.source[:m.start()] + pointer + cell.source[close.end():]).strip("\n")
        fig = nbformat.v4.new_markdown_cell(block)
        fig.metadata["tags"] = [MAIN_FIGURE_TAG]
        nb.cells.insert(at + 1, fig)
        return True
    return False


def refresh_claims(nb, results: Mapping[str, Any]) -> None:
    """Re-render the output of the page's claims cell (tagged by :func:`tag_claims_table`) from
    its results file (:func:`stitchkit.verdicts.results.claims_html`), so that pages executed before a
    change of that rendering read like new ones."""
    import nbformat

    for cell in nb.cells:
        if cell.cell_type == "code" and CLAIMS_TAG in cell.metadata.get("tags", []):
            html = claims_html(results.get("claims", []))
            if [o.get("data", {}).get("text/html") for o in cell.get("outputs", [])] != [html]:
                cell["outputs"] = [nbformat.v4.new_output("display_data", data={"text/html": html,
                                                                                 "text/plain": "<the claims>"})]
            return


# --------------------------------------------------------------------------------------------
# A page's replication (stitchkit replicate --record)


REPLICATION_TAG = "replication"


def replication_section(doc: Mapping[str, Any], results: Mapping[str, Any]) -> str:
    """The page's "Replication" section (markdown) from a kept replication ``doc``: how many verdicts
    held, claim by claim, and a warning when the page's run is not the one it was compared with."""
    held, compared = doc.get("held", 0), doc.get("compared", 0)
    date = str(doc.get("date") or "?")[:10]
    lines = ["## Replication: other seeds, an empty cache", "",
             f"This page was run again at `{doc.get('scale')}` on {date} with every trained network's seeds "
             f"shifted by {doc.get('seed_offset')} (`stitchkit replicate {doc.get('id')} --scale {doc.get('scale')}`),"
             " from an empty cache of its own, so that no network of the page's run was reused. "
             f"**{held} of {compared} verdicts held.**"]
    same = (doc.get("book_date") == (results.get("provenance") or {}).get("date")
            and doc.get("book_source_sha256") == results.get("source_sha256"))
    if not same:
        lines += ["", ":::{warning}\nThe replication was compared with an earlier run of this page "
                  f"(of {str(doc.get('book_date') or '?')[:10]}), not the one shown here: the agreement below is "
                  "that run's, until the replication is run again.\n:::"]
    body = [[escape(r.get("text") or r["claim"]), f"`{r['claim']}`", escape(r.get("book") or "-"),
             escape(r["replicate"]), {True: "held", False: "**changed**", None: "not comparable"}[r["held"]]]
            for r in doc.get("claims", [])]
    lines += ["", table(["claim", "key", "this page", "other seeds", ""], body)]
    return "\n".join(lines)


def insert_replication(nb, figure_id: str, results: Mapping[str, Any], book_dir: Path = paths.BOOK_DIR) -> bool:
    """Put (or refresh) the page's "Replication" section in an executed notebook ``nb`` from its kept
    replication (:func:`stitchkit.book.replicated.record`), before its "Deviations from the paper"
    section (else at the end); remove it when none is kept. True if it changed."""
    doc = replicated.load(figure_id, book_dir)
    return changes.put_section(nb, REPLICATION_TAG, None if doc is None else replication_section(doc, results))


def link_pages(book_dir: Path = paths.BOOK_DIR, skip: Iterable[str] = ()) -> list[Path]:
    """:func:`link_glossary`, :func:`refresh_boxes`, the "Changes after a run" section
    (:func:`stitchkit.book.changes.insert_into`), :func:`tag_claims_table` and :func:`hide_code` on
    every executed page under ``book_dir`` but those of ``skip`` (IDs whose files cannot be read);
    returns those they changed."""
    import nbformat

    changed = []
    skip = set(skip)
    for path in sorted(Path(book_dir).glob("*/*.ipynb")):
        if not visible(path, Path(book_dir)) or path.stem in skip:
            continue
        doc = json.loads(path.read_text())
        if "cells" not in doc:  # not an executed page
            continue
        nb = nbformat.reads(json.dumps(doc), as_version=4)
        before = [c.source for c in nb.cells]
        outputs = [json.loads(json.dumps(c.get("outputs"))) for c in nb.cells]
        link_glossary(nb)
        tagged = tag_claims_table(nb) | hide_code(nb)  # before refresh_claims: it finds the tagged cell
        results_path = path.with_suffix(".results.json")
        results = {}
        if results_path.exists():
            results = json.loads(results_path.read_text())
            beside = [json.loads(f.read_text()) for f in sorted(path.parent.glob(f"{path.stem}.*.results.json"))]
            refresh_boxes(nb, results, beside, counted_beside(results, beside, paths.NOTEBOOKS_DIR / f"{path.stem}.py"))
            refresh_claims(nb, results)
        figure_first(nb)
        changes.insert_into(nb, path.stem, str(results.get("provenance", {}).get("date") or "")[:10])
        insert_replication(nb, path.stem, results, Path(book_dir))
        if tagged or [c.source for c in nb.cells] != before or [c.get("outputs") for c in nb.cells] != outputs:
            atomic_write_text(path, nbformat.writes(nb))
            changed.append(path)
    return changed


__all__ = ["CLAIMS_TAG", "GLANCE_CLASS", "GLANCE_FULL", "GLANCE_WHY", "MAIN_FIGURE_TAG", "figure_first", "REPLICATION_TAG", "RUN_TAG", "insert_replication", "replication_section", "GLOSSARY_TERMS", "escape", "hide_code", "link", "link_glossary",
           "link_pages", "link_terms", "ours_head", "page_boxes", "page_times", "provenance_banner", "put_under_title",
           "refresh_boxes", "refresh_claims", "rerun_box", "result_box", "run_boxes", "table", "tag_claims_table", "tidy_page",
           "zoo_grid", "zoo_of"]
