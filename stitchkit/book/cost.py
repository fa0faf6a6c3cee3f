"""The Cost page (``book/cost.md``) and the cost lines of the part pages: what each committed page
took, the `demo` budgets beside the time from an empty cache, the side-by-side benchmark ratios of
``make bench`` (``benchmarks/results.json``, and ``results-gpu.json`` where a GPU was lent), and the
paper-scale projections in GPU-hours.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from ..registry.papers import Paper, paper_of
from .catalogue import Page, empty_cache_seconds, minutes, ran_from_empty_cache
from .pages import escape, link, table

BOOK_DEMO_BUDGET_MINUTES = 120  # issue 12: the whole demo book from an empty cache on 2 CPU cores
# "Networks a reader can believe" (2026-12-07): the book re-run on its re-based networks stays within 2x
# of the book before the re-base, as this page measured it then: 365.2 min as run, and at least 900.3 min
# from an empty cache (the pages' runs plus the recorded compute of every model and stitch they read)
BOOK_REBASE_BOUNDS = {"as run": 2 * 365.2, "from an empty cache": 2 * 900.3}


def rebase_text(pages: list[Page]) -> str:
    """The `demo` book's time against the bounds of its networks' re-base (:data:`BOOK_REBASE_BOUNDS`):
    as run, and from an empty cache, each with its ratio to the bound."""
    walls = sum(p.wall_seconds or 0.0 for p in pages) / 60
    cold, missing = empty_cache_seconds(pages)
    got = {"as run": walls, "from an empty cache": cold / 60}
    parts = [f"{what}, {'at least ' if what != 'as run' and missing else ''}{minutes(60 * got[what])} of "
             f"{minutes(60 * bound)} ({got[what] / bound:.2f}× the bound)" for what, bound in BOOK_REBASE_BOUNDS.items()]
    return ("Since the networks were re-based on 2026-12-07, the `demo` book is bounded by twice its time before "
            "(365.2 min as run, at least 900.3 min from an empty cache): " + "; ".join(parts) + ".")


def budget_text(pages: list[Page], budget_minutes: float, what: str) -> str:
    """The issue's `demo` budget beside what the `demo` pages took and would take from an empty cache."""
    n = len(pages)
    walls = sum(p.wall_seconds or 0.0 for p in pages)
    cold, missing = empty_cache_seconds(pages)
    text = (f"The `demo` budget of {what} is {budget_minutes:g} min on 2 CPU cores from an empty cache. Its {n} "
            f"`demo` page{'s' if n != 1 else ''} took {minutes(walls)} as run")
    if ran_from_empty_cache(pages):
        return text + (f", one after another from an empty cache ({walls / 60 / budget_minutes:.1f}× the budget): every "
                       "model and stitch they use was computed by these runs, so this is a measurement, not an "
                       "estimate.")
    if n and missing == n:
        return text + ("; none of them records the models and stitches it found in the cache (such a page counts "
                       "only its own run), so no empty-cache estimate can be given yet.")
    ratio = cold / 60 / budget_minutes
    text += (f"; from an empty cache they would take {'at least' if missing else 'about'} {minutes(cold)} "
             f"({ratio:.1f}× the budget{' or more' if missing else ''}): each page's own run plus the recorded "
             "compute time of every model and stitch it found in the cache, each counted once.")
    if missing:
        text += (f" {missing} of the {n} pages predate that record or used cache entries made before it (whose "
                 "compute is not counted).")
    return text + " Compute times recorded beside other work overstate; none of this is one timed empty-cache run."


def _bench_table(bench: Mapping[str, Any]) -> list[str]:
    out = [f"Measured {escape(str(bench.get('date', '?'))[:10])} on **{escape(bench.get('device', '?'))}** "
           f"(automatic precision: {escape(bench.get('precision', '?'))}). Each row times a baseline and "
           "this companion's path side by side in one run; the ratio is the result.", ""]
    rows_ = []
    for r in bench.get("rows", []):
        target = "-" if r.get("target") is None else f"≥ {r['target']:g}×"
        met = "-" if r.get("target") is None else ("yes" if r["ratio"] >= r["target"] else "no")
        rows_.append([escape(r["benchmark"]), escape(r["setting"]),
                      f"{escape(r['baseline'])}: {r['baseline_value']:.3g} {escape(r['unit'])}",
                      f"{escape(r['ours'])}: {r['ours_value']:.3g} {escape(r['unit'])}", f"{r['ratio']:.2f}×",
                      target, met])
    notes = [f"- {escape(r['benchmark'])}: {escape(r['notes'])}" for r in bench.get("rows", []) if r.get("notes")]
    return [*out, table(["benchmark", "setting", "baseline", "ours", "ratio", "target", "met"], rows_), "", *notes,
            *([""] if notes else [])]


LOAN_SECONDS = 550  # one GPU run's time for pages (benchmarks/gpu_batch.sh's default BUDGET), in the plan's runs


def gpu_plan(pages: list[Page]) -> tuple[list[list[str]], str]:
    """The rows of the Cost page's `gpu` table (every figure offering `gpu`, in the batch's priority
    order: its estimate or measured time, and where the book stands with it) and a sentence on how
    many GPU runs of :data:`LOAN_SECONDS` the pages not yet current at `gpu` fill at those times,
    run one after another."""
    from ..base import paths
    from ..registry.figures import FIGURES
    from ..registry.staleness import file_hash
    from .gpu_estimates import ESTIMATES, in_priority_order

    shown = {p.id: p for p in pages if p.shown}  # not a lower scale's verdicts kept beside it
    rows, loans, left, beyond, unknown = [], 0, 0.0, [], []
    for fid in in_priority_order(f.id for f in FIGURES if "gpu" in f.scales):
        page = shown.get(fid)
        at_gpu = page is not None and page.results.get("scale") == "gpu"
        current = at_gpu and page.behind() is None
        wall = (page.results.get("provenance") or {}).get("wall_seconds") if at_gpu else None
        # a run of the current notebook is the measurement (whatever library changed since); before one, the
        # table's estimate
        notebook, recorded = paths.NOTEBOOKS_DIR / f"{fid}.py", page.results.get("source_sha256") if at_gpu else None
        same_notebook = at_gpu and (not recorded or not notebook.is_file() or file_hash(notebook) == recorded)
        est = wall if same_notebook else ESTIMATES["gpu"].get(fid)
        rows.append([link(page.doc, fid, "") if page is not None else fid,
                     "-" if est is None else minutes(est), "-" if wall is None else minutes(wall),
                     "current" if current else ("behind its code" if at_gpu else "not run")])
        if current:
            continue
        if est is None:
            unknown.append(fid)
        elif est > LOAN_SECONDS:
            beyond.append(fid)
        elif est <= left:
            left -= est
        else:
            loans, left = loans + 1, LOAN_SECONDS - est
    text = (f"At these times, the pages not yet current at `gpu` that each take at most {minutes(LOAN_SECONDS)} "
            f"of one GPU fill {loans} run{'s' if loans != 1 else ''} of up to {minutes(LOAN_SECONDS)}, one page "
            "after another.")
    if beyond:
        text += (f" {len(beyond)} page{'s' if len(beyond) != 1 else ''} ({', '.join(beyond)}) take longer than that "
                 "on one GPU: a longer run of a GPU of the reader's own, or the cluster.")
    if unknown:
        text += f" No estimate yet for {', '.join(unknown)}."
    return rows, text + (" Several processes sharing the GPU (`benchmarks/gpu_lanes.py`) would shorten this; until "
                         "measured, the plan counts one.")


def cost_markdown(pages: list[Page], bench: Mapping[str, Any] | None, gpu: Mapping[str, Any] | None = None) -> str:
    """The Cost page: wall time of every committed page (per paper), each `gpu` page's estimate and
    measured time with the GPU runs the rest need, the benchmark tables of side-by-side ratios (CPU,
    and GPU where one was lent), and the paper-scale projections."""
    out = ["# Cost", "",
           "What each page cost to compute, and how much faster this companion's code paths are than the "
           "straightforward ones. Every number here is read from the pages' results files and from "
           "`benchmarks/results.json` (written by `make bench`).", "", "## Committed pages", ""]
    body, totals = [], {}
    for page in pages:
        prov = page.results.get("provenance", {})
        paper = paper_of(page.id)
        wall = prov.get("wall_seconds")
        totals[paper.name if paper else "?"] = totals.get(paper.name if paper else "?", 0.0) + (wall or 0.0)
        body.append([escape(paper.name if paper else "?"), link(page.doc, page.id, ""),
                     f"`{page.results.get('scale', '?')}`", minutes(wall), escape(prov.get("device", "?")),
                     escape(prov.get("precision", "?"))])
    if body:
        out += [table(["paper", "page", "scale", "wall time", "device", "precision"], body), "",
                "Per paper, in total: " + "; ".join(f"{k} {minutes(v)}" for k, v in totals.items()) + ". "
                f"The whole book: {minutes(sum(totals.values()))} as run. "
                + budget_text([p for p in pages if p.results.get("scale") == "demo"], BOOK_DEMO_BUDGET_MINUTES,
                               "the whole book") + " "
                + rebase_text([p for p in pages if p.results.get("scale") == "demo"]), ""]
    else:
        out += ["No page has been executed yet.", ""]
    rows, loans = gpu_plan(pages)
    out += ["## The book on one GPU", "",
            "Every page with a `gpu` preset, in the order a lent GPU runs them (the ranks of the pages' estimates in "
            "`stitchkit/registry/figures.py`): its time on one GPU, measured where the book holds its `gpu` run, else "
            "the estimate its registry entry states, made from measured pieces and FLOPs before any run "
            "(`stitchkit/book/gpu_estimates.py` says how), and where the book stands with it.", "",
            table(["page", "time on one GPU", "measured at `gpu`", "the book"], rows), "", loans, ""]
    out += ["## Measured speed-ups", ""]
    for label, b in (("CPU", bench), ("GPU", gpu)):
        if len([x for x in (bench, gpu) if x]) > 1:
            out += [f"### {label}", ""]
        if b:
            out += _bench_table(b)
    if not bench and not gpu:
        out += ["Not measured yet: run `make bench`.", ""]
    measured = _gpu_throughput(gpu)
    device = escape((gpu or {}).get("device", "a GPU"))
    out += ["## Paper-scale projections", "",
            "The stitching work of the two largest paper-scale runs, counted from their `paper` presets: one "
            "*image pass* is one training image through one stitch step (the frozen receiver's top forward and "
            "backward; the sender's activations are computed once per cut and shared). The stitch grid is timed "
            "on a GPU at two training lengths, which separates its training rate from its per-stitch overhead "
            "(the direct-matching fit, the sender's activations, the evaluation on the test set); the GPU-hours "
            "are stitches × overhead + image passes / training rate. The last column is the overall throughput "
            "that finishing the run within the stated goal (GPU-hours) needs.", ""]
    if measured:
        out += [f"Throughput measured {escape(str(gpu.get('date', '?'))[:10])} on **{device}** by `make bench` "
                "(`benchmarks/results-gpu.json`), with untrained copies of the paper-scale networks (throughput does "
                "not depend on the weights): " + "; ".join(f"{escape(k)}: {escape(v['setting'])}, {v['seconds']:.0f} s"
                                                           for k, v in measured.items()) + ".", ""]
    else:
        out += ["No GPU has been available to `make bench` yet, so the measured column is empty: a number "
                "extrapolated from a CPU would not be a measurement.", ""]
    work = []
    for piece, goal in _paper_work():
        need = "-" if goal is None else f"{piece['image_passes'] / (goal * 3600):,.0f} image passes/s"
        got = _throughput_for(piece, measured)
        rate = "not measured" if got is None else _rate_text(got)
        hours = "-" if got is None else f"{_projected_hours(piece, got):.1f}"
        work.append([escape(piece["what"]), f"{piece['stitches']:,}",
                     f"{piece['epochs']:g} × {piece['images']:,}", f"{piece['image_passes']:.3g}",
                     "-" if goal is None else f"≤ {goal:g} H100-hours", rate, hours, need])
    out += [table(["run", "stitches", "epochs × images", "image passes", "goal", "measured GPU throughput",
                    "projected GPU-hours", "throughput the goal needs"], work), ""]
    return "\n".join(out)


def paper_scale_line(paper: Paper, gpu: Mapping[str, Any] | None = None) -> str:
    """For the parts whose paper-scale cost an issue bounds: the work counted from the presets,
    the GPU throughput the goal needs and, where ``make bench`` ran on a GPU, the projected
    GPU-hours (the arithmetic is on the Cost page)."""
    lines = []
    measured = _gpu_throughput(gpu)
    for piece, goal in _paper_work():
        if not piece["what"].startswith(paper.prefix + "-") or goal is None:
            continue
        need = piece["image_passes"] / (goal * 3600)
        got = _throughput_for(piece, measured)
        if got is None:
            speed = "Projected GPU-hours need a throughput measured on a GPU, which no run has had yet; "
        else:
            speed = (f"Measured on {escape(gpu.get('device', 'a GPU'))}, the stitch grid runs at {_rate_text(got)}: "
                     f"{_projected_hours(piece, got):.1f} GPU-hours; ")
        lines.append(f"**Paper scale.** {piece['what']}: {piece['stitches']:,} stitches, "
                     f"{piece['image_passes']:.3g} image passes of stitch training. {speed}the goal of {goal:g} "
                     f"H100-hours needs {need:,.0f} image passes per second (arithmetic on the {{doc}}`../cost` page).")
    return ("\n" + "\n\n".join(lines) + "\n") if lines else ""


def _gpu_throughput(gpu: Mapping[str, Any] | None) -> dict[str, dict]:
    """The paper-scale stitch-grid throughputs of a GPU benchmark run, by run name ("H-F2", ...)."""
    return {p["run"]: p for p in (gpu or {}).get("paper_throughput", [])}


def _projected_hours(piece: dict, got: dict) -> float:
    """GPU-hours of a paper-scale piece from a measured grid: stitches x per-stitch overhead +
    image passes / training rate where the two were measured apart (two training lengths), else
    image passes / the overall rate (which counts the overhead once per epoch: errs high)."""
    if got.get("training_passes_per_second"):
        return (piece["stitches"] * got["overhead_seconds_per_stitch"]
                + piece["image_passes"] / got["training_passes_per_second"]) / 3600
    return piece["image_passes"] / got["image_passes_per_second"] / 3600


def _rate_text(got: dict) -> str:
    if got.get("training_passes_per_second"):
        return (f"{got['training_passes_per_second']:,.0f} image passes/s of training + "
                f"{got['overhead_seconds_per_stitch']:.2f} s per stitch")
    return f"{got['image_passes_per_second']:,.0f} image passes/s"


def _throughput_for(piece: dict, measured: dict[str, dict]) -> dict | None:
    """The measured throughput of the run a paper-scale work count describes, if any."""
    return next((v for k, v in measured.items() if piece["what"].startswith(k + " ")), None)


@functools.lru_cache(maxsize=1)
def _paper_work() -> tuple[tuple[dict, float | None], ...]:
    """(work, goal in H100-hours) of the paper-scale runs whose cost the issues bound. The counts
    read the networks' layer lists, so the 108 paper-size networks are built on the meta device
    (shapes only: no weights drawn) and once per process."""
    import torch

    from ..experiments.balogh import identification
    from ..experiments.hernandez import all_layers

    with torch.device("meta"):
        return ((all_layers.paper_work(), 4.0), (identification.paper_work("resnet18"), 24.0),
                (identification.paper_work("vit"), None))


__all__ = ["BOOK_DEMO_BUDGET_MINUTES", "BOOK_REBASE_BOUNDS", "budget_text", "cost_markdown", "paper_scale_line", "rebase_text"]
