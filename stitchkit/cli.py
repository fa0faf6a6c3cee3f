"""The ``stitchkit`` command (also ``python -m stitchkit``)::

    stitchkit list                                  notebooks and their parameters
    stitchkit run ID --scale S [-p KEY VALUE ...]   one-off run into runs/ (not the book)
                  [--dask ADDRESS [--dask-timeout SECONDS]]   (its stitch grids on a Dask cluster)
    stitchkit sweep ID --scale S -p KEY V1 V2 ...   grid of runs, results collected in one table
                    [--dask ADDRESS [--dask-timeout SECONDS]]
    stitchkit book [--scale S] [--no-build]         build the HTML book (pages behind are shown marked behind)
          [--rerun-behind]                          re-run the pages behind their code first (from the cache)
          [--only ID ...]                           execute only these pages, in this order
    stitchkit pages [ID ...] --scale S --pack F     execute pages and pack them into one archive
          [--budget SECONDS] [--require-gpu]        (on a lent GPU machine: ``make gpu-batch``; no IDs:
          [--dry-run]                               the batch's priority order, stitchkit.book.batch)
    stitchkit import-pages F                        check an archive and place its pages into book/
    stitchkit sync [ID ...] [--check]               write notebooks' parameters cells from their configs
    stitchkit compare A B --layers-a L.. --layers-b L.. --data D   two of your own networks: report + JSON
    stitchkit layers MODEL [--kwargs JSON]          a model's layers (compare's names) and output shapes

Exit status: 0 done; 2 a bad input or environment (unknown notebook, scale or parameter, a value
out of range, missing or corrupt data, an output folder that cannot be written, a Dask scheduler
that does not answer), with a one-line message; 1 a run that failed (the message names the
failed runs and where their partial notebooks are; a sweep keeps every finished run in its
``results.csv``); 130 (Ctrl-C) or 143 (SIGTERM, e.g. ``kill`` or ``timeout``) a run stopped from
outside, handled like a failure: one line, the partial notebook kept as ``<ID>.failed.ipynb``, a
sweep's ``results.csv`` listing the interrupted point and those still pending.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import sys
from typing import Any

from .base import paths
from .base.cluster import connect
from .base.environment import DASK_ENV, DASK_TIMEOUT_ENV
from .book import runs
from .book.catalogue import TITLES, empty_cache_seconds, load_pages, smoke_times
from .book.runs import describe_failure, on_sigterm
from .registry.figures import SCALES


def parse_value(text: str) -> Any:
    """Python literal if it parses (3, 0.5, True, None, [1, 2]), else the string itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _pairs(groups: list[list[str]] | None, multi: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group in groups or []:
        key, *values = group
        if not values:
            raise ValueError(f"-p {key} needs a value")
        if not multi and len(values) > 1:
            raise ValueError(f"-p {key} takes one value with 'run' (use 'sweep' for several)")
        if key in out:
            raise ValueError(f"parameter {key} given twice")
        parsed = [parse_value(v) for v in values]
        repeated = [v for i, v in enumerate(values) if parsed[i] in parsed[:i]]
        if repeated:
            raise ValueError(f"-p {key}: value(s) {', '.join(repeated)} given twice (each point would run twice)")
        out[key] = parsed if multi else parsed[0]
    return out


def _notebook_command(sub, name: str, help_: str, metavar: tuple[str, str], param_help: str,
                      default_out: str) -> argparse.ArgumentParser:
    """A subcommand taking a notebook ID, --scale, -p KEY VALUE... and --out."""
    p = sub.add_parser(name, help=help_)
    p.add_argument("id")
    p.add_argument("--scale", default="smoke", help=f"one of {', '.join(SCALES)} (default smoke)")
    p.add_argument("-p", "--param", nargs="+", action="append", metavar=metavar, help=param_help)
    p.add_argument("--out", help=f"output folder (default {default_out})")
    return p


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    ap = argparse.ArgumentParser(prog="stitchkit", description="Model-stitching reproduction companion.")
    ap.add_argument("--version", action="version", version=f"stitchkit {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="the figures, one line each (ID, title, the book's run and its time), or one "
                                     "figure's parameters")
    ls.add_argument("id", nargs="?", metavar="ID", help="list this figure's parameters")
    rn = _notebook_command(sub, "run", "execute one notebook into runs/", ("KEY", "VALUE"),
                           "override a parameter (repeatable)", "runs/<ID>/<stamp>-<scale>")
    rn.add_argument("--dask", metavar="ADDRESS", help="scheduler address of a Dask cluster: the page's stitch grids "
                                                      "run there (default: here)")
    rn.add_argument("--dask-timeout", metavar="SECONDS", type=float, default=10.0,
                    help="how long to wait for the Dask scheduler to answer (default 10)")
    rp = _notebook_command(sub, "replicate", "re-run a page from an empty cache with other seeds and tabulate "
                                             "which verdicts held against the book's run", ("KEY", "VALUE"),
                           "override a parameter (repeatable)", "runs/<ID>/<stamp>-<scale>-seeds+<offset>")
    rp.add_argument("--offset", type=int, default=1000,
                    help="added to every trained network's seeds (default 1000); the run has a cache of its own")
    rp.add_argument("--record", action="store_true",
                    help="also keep the agreement beside the page's results in book/, where the page shows it")
    sw = _notebook_command(sub, "sweep", "run a grid of parameter values and collect the results", ("KEY", "V1"),
                           "a parameter and its values (repeatable; the grid is their product)",
                           "runs/sweeps/<ID>-<stamp>-<scale>")
    sw.add_argument("--dask", metavar="ADDRESS", help="scheduler address of a Dask cluster (default: run here)")
    sw.add_argument("--dask-timeout", metavar="SECONDS", type=float, default=10.0,
                    help="how long to wait for the Dask scheduler to answer (default 10)")
    sw.add_argument("--yes", action="store_true", help=f"start a sweep estimated at more than "
                                                       f"{SWEEP_CONFIRM_SECONDS // 3600} hour(s)")
    bk = sub.add_parser("book", help="execute stale notebooks into book/ and build the HTML book")
    bk.add_argument("--scale", help=f"re-execute every notebook at this scale ({', '.join(SCALES)})")
    bk.add_argument("--stale-scale", default="demo", help="scale for notebooks that are stale (default demo)")
    bk.add_argument("--no-build", action="store_true", help="execute only; skip Jupyter Book")
    bk.add_argument("--rerun-behind", action="store_true",
                    help="also re-run the pages behind their notebook or library (default: render them as "
                         "committed, marked behind), each resuming from the artifact cache")
    bk.add_argument("--only", nargs="+", metavar="ID",
                    help="execute only these pages, in this order (the book is still built from every page)")
    pg = sub.add_parser("pages", help="execute pages at a scale and pack them into one archive for import-pages")
    pg.add_argument("ids", nargs="*", metavar="ID",
                    help="pages to run (default: the batch's priority order, pages not current at the scale)")
    pg.add_argument("--scale", required=True, help=f"one of {', '.join(SCALES)}")
    pg.add_argument("--pack", metavar="FILE", help="the archive to write (.tar.gz, at most 16 MiB)")
    pg.add_argument("--budget", metavar="SECONDS", type=float,
                    help="start a page only while its estimate fits the seconds left (pages without one are skipped)")
    pg.add_argument("--require-gpu", action="store_true", help="stop before any training unless torch sees a CUDA GPU")
    pg.add_argument("--dry-run", action="store_true", help="print the plan and the checks; run nothing")
    pg.add_argument("--lanes", type=int, default=1, metavar="N",
                    help="run the pages in N concurrent processes sharing the device, their networks trained "
                         "ahead in N processes too (default 1)")
    pg.add_argument("--workers", type=int, default=1, metavar="N",
                    help="the pages' stitch grids run on the local Dask cluster STITCHKIT_DASK names, of N worker "
                         "processes: the estimates count on it (default 1)")
    pg.add_argument("--prefetched", action="store_true", help=argparse.SUPPRESS)  # a lane: networks trained ahead
    nw = sub.add_parser("networks",
                        help="train (or find cached) the networks pages need at a scale: a batch's prefetch")
    nw.add_argument("ids", nargs="+", metavar="ID")
    nw.add_argument("--scale", required=True, help=f"one of {', '.join(SCALES)}")
    nw.add_argument("--lane", type=int, default=0, help="train every LANES-th network from this one (default 0)")
    nw.add_argument("--lanes", type=int, default=1, help="how many processes share the networks (default 1)")
    im = sub.add_parser("import-pages", help="check an archive of pages and place them into book/")
    im.add_argument("archive")
    cp = sub.add_parser("compare", help="compare two of your own networks at named layers: an HTML report and a JSON")
    cp.add_argument("model_a", metavar="A", help="module:callable building the model (e.g. stitchkit.networks.models:resnet18), "
                                                 "or a file holding a whole pickled model (with --trust-pickle)")
    cp.add_argument("model_b", metavar="B", help="the same, for B")
    cp.add_argument("--weights-a", metavar="FILE", help="a state dict to load into A")
    cp.add_argument("--weights-b", metavar="FILE", help="a state dict to load into B")
    cp.add_argument("--trust-pickle", action="store_true",
                    help="load A or B given as a whole-model file (a pickle: unpickling runs the code it holds; "
                         "only for files you made; prefer a state dict with --weights-*, always read as tensors)")
    cp.add_argument("--layers-a", nargs="+", required=True, metavar="L", help="A's modules, by path (named_modules)")
    cp.add_argument("--layers-b", nargs="+", required=True, metavar="L", help="B's modules, by path")
    cp.add_argument("--data", required=True,
                    help="a data set's name (cifar10, mnist), an image folder <root>/<split>/<class>/<image>, or "
                         "module:callable, your own data: called with 'train' (the fit images) and 'test' (the "
                         "measured images), it returns a torch Dataset of (image, label) items or a DataLoader of "
                         "(images, labels) batches, images float tensors (C, H, W) in [0, 1], labels ints")
    from .comparing.inputs import NORMALISATIONS

    choices = ", ".join(NORMALISATIONS)
    cp.add_argument("--normalisation", metavar="NAME",
                    help=f"how both models expect the images normalised: {choices} (default: the data set's own; "
                         "an image folder and module:callable data need it, none for images normalised already)")
    cp.add_argument("--normalisation-a", metavar="NAME",
                    help="A's own normalisation (default: --normalisation's); when A's and B's differ, the images stay "
                         "on the [0, 1] scale and each model normalises its own input (a forward pre-hook on the "
                         "model: its layers keep their names)")
    cp.add_argument("--normalisation-b", metavar="NAME", help="B's own normalisation (default: --normalisation's)")
    cp.add_argument("--resize", "--size", nargs=2, type=int, metavar=("H", "W"),
                    help="resize every image to H x W (bilinear, antialiased when shrinking) before it is normalised")
    cp.add_argument("--images", type=int, default=2000, help="test images measured (default 2000)")
    cp.add_argument("--fit-images", type=int, default=2000, help="training images the stitches are fitted on "
                                                                 "(default 2000)")
    cp.add_argument("--measures", nargs="+", metavar="M", help="default: every one (cka pwcca procrustes dm "
                                                               "dm_accuracy tlm_accuracy)")
    cp.add_argument("--batch", type=int, default=250, help="images per batch (memory grows with it, not with "
                                                           "--images)")
    cp.add_argument("--out", default="compare", help="output folder (default ./compare)")
    cp.add_argument("--kwargs-a", metavar="JSON", help="keyword arguments of A's factory, a JSON object "
                                                       "(e.g. '{\"num_classes\": 10}')")
    cp.add_argument("--kwargs-b", metavar="JSON", help="the same, for B")
    cp.add_argument("--device", help="where the models run: cpu, cuda, cuda:1 (default: where their parameters are)")
    cp.add_argument("--seed", type=int, default=0, help="the seed of the class-balanced image samples (default 0)")
    cp.add_argument("--resamples", type=int, help="bootstrap resamples of every interval (default 1000)")
    cp.add_argument("-q", "--quiet", action="store_true", help="no progress or status lines on the terminal")
    cp.add_argument("-v", "--verbose", action="store_true", help="also each task-loss stitch's own training bar")
    ly = sub.add_parser("layers", help="a model's layers as compare names them, with each one's output shape")
    ly.add_argument("model", metavar="MODEL", help="module:callable (e.g. torchvision.models:resnet18) or, with "
                                                   "--trust-pickle, a file holding a whole model")
    ly.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory, a JSON object")
    ly.add_argument("--weights", metavar="FILE", help="a state dict to load into it")
    ly.add_argument("--trust-pickle", action="store_true", help="load a whole-model file (a pickle: runs its code)")
    ly.add_argument("--data", help="a data set's name, an image folder or module:callable (as compare takes them) "
                                   "whose image size to use (default 3x32x32)")
    ly.add_argument("--resize", "--size", nargs=2, type=int, metavar=("H", "W"),
                    help="resize the image to H x W first (as compare does)")
    sy = sub.add_parser("sync", help="write each notebook's parameters cell from its figure's config")
    sy.add_argument("ids", nargs="*", metavar="ID", help="these notebooks (default: every one)")
    sy.add_argument("--check", action="store_true", help="write nothing; exit 1 if a cell differs")
    return ap


def run_pages(args) -> None:
    """``stitchkit pages``: plan (priority, budget), check (GPU, packages, data), run and pack."""
    import dataclasses
    from pathlib import Path

    from .book.batch import plan, preflight
    from .book.transfer import pack_pages

    if args.budget is not None and not (math.isfinite(args.budget) and args.budget > 0):
        raise ValueError(f"--budget must be > 0 seconds, got {args.budget:g}")
    if not args.dry_run and not args.pack:
        raise ValueError("pages needs --pack FILE (the archive to write), or --dry-run")
    if args.workers > 1 and not os.environ.get(DASK_ENV, "").strip():
        raise ValueError(f"--workers {args.workers} needs a Dask cluster: set {DASK_ENV} to its scheduler's address "
                         "(benchmarks/dask_local.py starts one here)")
    decisions = plan(args.scale, args.budget, args.ids or None, lanes=args.lanes, workers=args.workers)
    for d in decisions:
        print(f"{d.id:7} {'run ' if d.run else 'skip'}  {d.why}")
    run = [d.id for d in decisions if d.run]
    for line in preflight(run, require_gpu=args.require_gpu, kernel=bool(run) and not args.dry_run):
        print(line)
    if args.dry_run:
        return
    if not run:
        print("nothing to run")
        return
    if args.lanes > 1:
        from .book.transfer import run_lanes

        manifest = run_lanes(decisions, args.scale, Path(args.pack), budget=args.budget, lanes=args.lanes,
                             require_gpu=args.require_gpu)
    else:
        prefetched = args.prefetched
        if args.workers > 1:  # the networks first, in as many processes as the cluster has workers
            from .book.batch import prefetch

            prefetched = bool(prefetch(run, args.scale, args.workers)) or prefetched
        manifest = pack_pages(run, args.scale, Path(args.pack), budget=args.budget,
                              plan=[dataclasses.asdict(d) for d in decisions], prefetched=prefetched,
                              workers=args.workers)
    for page in manifest["pages"]:
        new = page.get("new_seconds")
        speed, share = page.get("train_images_per_second"), page.get("share_of_peak")
        print(f"{page['id']}: {page['claims']} claims, {page['wall_seconds']:.0f} s"
              + (f" ({new:.0f} s of it computing what the cache lacked)" if new is not None else "")
              + (f"; training {speed:,.0f} images/s" if speed else "")
              + (f", {100 * share:.1f}% of the measured bf16 peak" if share else ""))
    for page in manifest["skipped"]:
        print(f"{page['id']}: skipped ({page['why']})")
    print(f"packed: {args.pack}" if manifest["pages"] else "no page finished: nothing packed")


def _title(figure_id: str) -> str:
    return TITLES.get(figure_id, "")


def list_lines(infos: dict) -> list[str]:
    """``stitchkit list``: one line per figure: ID, title, the book's run of it (scale, wall
    time, and the time from an empty cache where the run's ledger allows the estimate) and its
    time at ``smoke`` from an empty cache (``benchmarks/smoke_times.py``)."""
    from .book.catalogue import minutes

    problems: dict[str, str] = {}
    shown = {p.id: p for p in load_pages(problems=problems) if p.shown}  # a bad results file: marked, not fatal
    smoke = smoke_times()
    def short(title: str, n: int = 50) -> str:
        return title if len(title) <= n else title[:n - 1].rstrip() + "…"

    width = max((len(short(_title(fid))) for fid in infos), default=0)
    lines = [f"{'ID':7} {'title':{width}}  {'smoke':7}  the book's run: scale, wall time; from an empty cache"]
    for fid in infos:
        page = shown.get(fid)
        if fid in problems:
            run = "results file not readable (see below)"
        elif page is None:
            run = "no page yet"
        else:
            cold, missing = empty_cache_seconds([page])
            run = (f"{page.results.get('scale')}, {minutes(page.wall_seconds)}; "
                   + (f"at least {minutes(cold)}" if missing else f"{minutes(cold)}"))
            behind = page.behind()
            run += f"; behind: {behind}" if behind else ""
        timed = smoke.get(fid, {}).get("seconds")
        lines.append(f"{fid:7} {short(_title(fid)):{width}}  {minutes(timed) if timed else '-':7}  {run}")
    lines.append("smoke: measured from an empty cache by benchmarks/smoke_times.py ('-': not timed). "
                 "`stitchkit list ID` shows a figure's parameters; `stitchkit run ID --scale S` runs it.")
    lines += [f"not readable: {why}" for why in problems.values()]
    return lines


SWEEP_CONFIRM_SECONDS = 3600  # a sweep estimated at more than this asks for --yes


def _sweep_estimate(figure_id: str, scale: str, values: dict, yes: bool) -> None:
    """Say how many runs a sweep starts and, where the book has a run of the page at that scale
    (or a measured smoke time), about how long they take one after another here; past
    :data:`SWEEP_CONFIRM_SECONDS` refuse without ``--yes`` (a 64,000-point sweep started without a
    word about its 85 hours)."""
    from .book.catalogue import minutes as _minutes

    def minutes(seconds: float) -> str:
        return f"{seconds / 3600:.1f} hours" if seconds >= 7200 else _minutes(seconds)

    n = math.prod(len(v) for v in values.values())
    per = None
    page = next((p for p in load_pages(problems={}) if p.id == figure_id and p.results.get("scale") == scale), None)
    if page is not None and page.wall_seconds:
        per, what = float(page.wall_seconds), f"the book's {scale} run"
    elif scale == "smoke" and smoke_times().get(figure_id, {}).get("seconds"):
        per, what = float(smoke_times()[figure_id]["seconds"]), "its measured smoke time from an empty cache"
    if per is None:
        print(f"sweep: {n} run(s) of {figure_id} at {scale}; no run of it at {scale} to estimate their time from")
        return
    total = n * per
    line = (f"sweep: {n} run(s) of {figure_id} at {scale}, about {minutes(per)} each ({what}): about {minutes(total)} "
            "one after another here (less where runs share cached networks, or on a cluster)")
    if total > SWEEP_CONFIRM_SECONDS and not yes:
        raise ValueError(f"{line}; pass --yes to start it, or sweep fewer values")
    print(line)


def _check_id_and_scale(figure_id: str, scale: str) -> None:
    """The figure's ID and the scale's name (and that the figure has that scale), before the data
    lookup: a typo in either is named as such, not as a missing data set (issue 66, finding 8)."""
    from .book.notebooks import get_notebook
    from .registry.scales import check_figure_scale, check_scale

    check_scale(scale)
    check_figure_scale(get_notebook(figure_id).id, scale)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with on_sigterm():
        return _main(args)


def _main(args) -> int:
    from pathlib import Path

    from .base.environment import check_environment

    try:
        check_environment()  # before anything is imported or computed: a bad variable is a bad input
    except ValueError as exc:
        print(f"stitchkit: error: {exc}", file=sys.stderr)
        return 2
    from .base.cluster import DaskSchedulerError
    from .base.fileio import OutputFolderError
    from .book.notebooks import discover, get_notebook
    from .book.runs import SweepFailed, SweepInterrupted, Terminated

    if args.command not in ("compare", "layers") and not paths.NOTEBOOKS_DIR.is_dir():
        print(f"stitchkit: error: stitchkit {args.command} needs the book's checkout (no notebooks folder at "
              f"{paths.NOTEBOOKS_DIR}): clone the repository and install it there (make install); stitchkit compare "
              "works from any install", file=sys.stderr)
        return 2
    if args.command not in ("list", "sync", "compare", "layers"):  # listing imports neither torch nor an experiment module
        from .book import execution
        from .book.batch import check_data
    try:
        if getattr(args, "out", None) == "":
            raise ValueError("--out is empty: name an output folder, or leave --out out for the default")
        if args.command == "list":
            broken: dict[str, str] = {}
            infos = discover(broken=broken)
            if args.id is not None:
                info = get_notebook(args.id)  # an unknown ID: the error names the valid ones
                print(f"{info.id}: {_title(info.id)} ({info.source.relative_to(info.source.parents[1])})")
                for p in info.parameters:
                    print(f"    {p.name} = {p.default!r}" + (f"  # {p.comment}" if p.comment else ""))
                return 0
            for line in list_lines(infos):
                print(line)
            for fid, why in broken.items():
                print(f"stitchkit: error: {fid} cannot be listed: {why}", file=sys.stderr)
            if broken:
                return 2
        elif args.command == "run":
            if not math.isfinite(args.dask_timeout) or args.dask_timeout <= 0:
                raise ValueError(f"--dask-timeout must be > 0 seconds, got {args.dask_timeout:g}")
            _check_id_and_scale(args.id, args.scale)  # the command line's own checks before the data lookup
            check_data([args.id])  # missing data: exit 2 before any compute (not a failed cell)
            if args.dask:  # refused now if it does not answer; the kernel's grids connect to it themselves
                connect(args.dask, args.dask_timeout).close()
                os.environ[DASK_ENV], os.environ[DASK_TIMEOUT_ENV] = args.dask, f"{args.dask_timeout:g}"
            out, results = execution.run_notebook(args.id, args.scale, _pairs(args.param, multi=False),
                                                  out_dir=Path(args.out) if args.out else None)
            print(f"executed notebook: {out}\nresults: {out.with_suffix('.results.json')}")
            for c in results.get("claims", []):
                print(f"  [{c['verdict']}] {c['text']} (paper: {c['paper']}; ours: {c['ours']})")
        elif args.command == "replicate":
            from .book.replication import replicate, summary

            _check_id_and_scale(args.id, args.scale)
            check_data([args.id])
            out, rows = replicate(args.id, args.scale, args.offset, _pairs(args.param, multi=False),
                                  out_dir=Path(args.out) if args.out else None, record_in_book=args.record)
            print(f"executed notebook: {out}\nagreement: {out.parent / 'replication.json'}\n{summary(rows)}")
        elif args.command == "sweep":
            values = _pairs(args.param, multi=True)
            if not values:
                raise ValueError("sweep needs at least one -p KEY V1 [V2 ...]")
            _check_id_and_scale(args.id, args.scale)
            _sweep_estimate(args.id, args.scale, values, args.yes)
            check_data([args.id])
            if not math.isfinite(args.dask_timeout) or args.dask_timeout <= 0:
                raise ValueError(f"--dask-timeout must be > 0 seconds, got {args.dask_timeout:g}")
            table = execution.sweep(args.id, args.scale, values, out_dir=Path(args.out) if args.out else None,
                                    dask_address=args.dask, dask_timeout=args.dask_timeout)
            print(runs.sweep_summary(table, list(values)))
            print(f"results (every number of every point): {table.attrs['csv']}")
        elif args.command == "pages":
            run_pages(args)
        elif args.command == "networks":
            from .book.batch import train_networks

            if not 0 <= args.lane < args.lanes:
                raise ValueError(f"--lane must be in [0, {args.lanes}), got {args.lane}")
            from .registry.scales import check_figure_scale

            for figure_id in args.ids:
                check_figure_scale(get_notebook(figure_id).id, args.scale)
            print(f"lane {args.lane}: {train_networks(args.ids, args.scale, args.lane, args.lanes)} networks ready")
        elif args.command == "compare":
            from .comparing.html_report import compare_files
            from .comparing.inputs import parse_kwargs

            for flag in ("images", "fit_images", "batch"):
                if getattr(args, flag) < 4:
                    raise ValueError(f"--{flag.replace('_', '-')} must be at least 4, got {getattr(args, flag)}")
            if args.resamples is not None and not 20 <= args.resamples <= 100_000:
                raise ValueError(f"--resamples must be from 20 to 100,000, got {args.resamples}")
            if args.device is not None:
                import torch

                try:
                    dev = torch.device(args.device)
                except RuntimeError:
                    raise ValueError(f"--device {args.device!r} is not a device; valid: cpu, cuda, cuda:N") from None
                if dev.type == "cuda" and not torch.cuda.is_available():
                    raise ValueError(f"--device {args.device}: torch sees no CUDA GPU here")
            if args.quiet:
                os.environ["STITCHKIT_PROGRESS"] = "0"
            compare_files(args.model_a, args.model_b, args.layers_a, args.layers_b, args.data, out=Path(args.out),
                          weights_a=args.weights_a, weights_b=args.weights_b, normalisation=args.normalisation,
                          normalisation_a=args.normalisation_a, normalisation_b=args.normalisation_b,
                          size=args.resize,
                          images=args.images, fit_images=args.fit_images, measures=args.measures,
                          batch_size=args.batch, trust_pickle=args.trust_pickle,
                          kwargs_a=parse_kwargs(args.kwargs_a, "--kwargs-a"),
                          kwargs_b=parse_kwargs(args.kwargs_b, "--kwargs-b"), device=args.device, seed=args.seed,
                          verbose=args.verbose,
                          resamples=args.resamples)
            print(f"report: {Path(args.out) / 'report.html'}\nevery number: {Path(args.out) / 'results.json'}")
        elif args.command == "layers":
            from .comparing.inputs import layers, parse_kwargs

            rows = layers(args.model, kwargs=parse_kwargs(args.kwargs, "--kwargs"), weights=args.weights,
                          trust_pickle=args.trust_pickle, data=args.data, size=args.resize)
            width = max((len(r[0]) for r in rows), default=4)
            print(f"{'layer':{width}}  {'module':20}  output per image")
            for name, kind, shape in rows:
                print(f"{name:{width}}  {kind:20}  {shape}")
        elif args.command == "sync":
            from .book.sync import sync

            differed = sync(args.ids or None, check=args.check)
            verb = "differ from their configs" if args.check else "rewritten from their configs"
            print(f"{len(differed)} parameters cell(s) {verb}" + (f": {', '.join(differed)}" if differed else ""))
            if args.check and differed:
                return 1
        elif args.command == "import-pages":
            from .book.transfer import import_pages

            for line in import_pages(Path(args.archive)):
                print(line)
        elif args.command == "book":
            problems: dict[str, str] = {}
            html = execution.build_book(args.scale, stale_scale=args.stale_scale, build=not args.no_build,
                                        problems=problems, rerun_behind=args.rerun_behind, only=args.only)
            if html is not None:
                print(f"book: {html / 'index.html'}")
            if problems:  # the book is built without them; each is named
                print(f"stitchkit: {len(problems)} page(s) not available or not re-run: "
                      + "; ".join(f"{k}: {v}" for k, v in problems.items()), file=sys.stderr)
    except SweepInterrupted as exc:
        print(f"stitchkit: error: {exc}", file=sys.stderr)
        return 143 if exc.signal_name == "SIGTERM" else 130
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM during a run: one line, the partial notebook kept
        what = "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"
        print(f"stitchkit: error: interrupted ({what})", file=sys.stderr)
        if getattr(exc, "failed_notebook", None):
            print(f"  partial notebook: {exc.failed_notebook}", file=sys.stderr)
        return 143 if what == "SIGTERM" else 130
    except SweepFailed as exc:
        print(exc.table.to_string(index=False))
        print(f"stitchkit: error: {exc}", file=sys.stderr)
        for line in exc.failed_points():
            print(f"  failed: {line}", file=sys.stderr)
        return 1
    except (ValueError, KeyError, FileNotFoundError) as exc:
        if getattr(exc, "failed_notebook", None):  # raised inside the run: a failed run
            return _run_failed(exc)
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"stitchkit: error: {msg}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output folder that cannot be written, a Dask scheduler that does not answer
        if getattr(exc, "failed_notebook", None):
            return _run_failed(exc)
        import errno

        if isinstance(exc, (OutputFolderError, DaskSchedulerError)) or not exc.filename:
            msg = " ".join(str(exc).split())
        elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR,
                           errno.EISDIR, errno.EEXIST):
            msg = f"cannot write to {exc.filename}: {exc.strerror}"
        else:
            msg = f"{exc.strerror or type(exc).__name__}: {exc.filename}"
        print(f"stitchkit: error: {msg}", file=sys.stderr)
        return 2
    except Exception as exc:
        try:
            from papermill.exceptions import PapermillExecutionError
        except ImportError:  # a plain install (no book tools, so no notebook ran): the real error, unmasked
            PapermillExecutionError = ()
        if not isinstance(exc, PapermillExecutionError) and not getattr(exc, "failed_notebook", None):
            raise
        return _run_failed(exc)
    return 0


def _run_failed(exc: BaseException) -> int:
    """The notebook itself failed (missing data, NaN loss, a full disk, ...): its own message says
    why (a file error with its path), and its partial notebook was kept."""
    why = describe_failure(exc)
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in why:
        why += f": {exc.filename}"
    print(f"stitchkit: error: the run failed: {why}", file=sys.stderr)
    if getattr(exc, "failed_notebook", None):
        print(f"  partial notebook: {exc.failed_notebook}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
