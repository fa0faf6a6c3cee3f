"""The prepared batch that spends a lent GPU in one call: which pages, in what order, within what
budget, after which checks.

A GPU is lent for minutes (15 of device time a loan, at most 10 a command, start-up included), on a
bare machine that holds this repository, the data archives and carried wheels. So everything is
decided here, on the CPU, beforehand::

    stitchkit pages --scale gpu --budget 540 --require-gpu --pack $OUT/pages.tar.gz

runs :func:`preflight` (the GPU, the packages that execute a notebook, the data archives: a missing
one stops the batch before any training, naming it), then :func:`plan`: the pages of
:data:`PRIORITY` in that order that have a preset at the scale and whose page at that scale is not
current, each started only while its estimate (:func:`estimate`) fits the budget left. The pages
run and pack through :func:`stitchkit.book.transfer.pack_pages`; the archive's manifest keeps the plan
and, per page, its wall time, estimate, device and torch version. ``make gpu-batch`` is the command
line a loan runs (it installs the wheels ``make wheels`` fetched first); ``stitchkit import-pages``
places the pages.

Estimates come from measurements, never from hope: at ``smoke`` the committed
``benchmarks/smoke_times.json``; at other scales the wall time of the book's own run at that
scale of the current notebook when there is one, else :data:`ESTIMATES` (device seconds, each
with where it comes from), else the wall time of a run of an older notebook. A page with no
estimate is not started: the batch cannot know that it finishes.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..base import paths
from ..networks import network
from ..registry.scales import UnknownScaleError, check_figure_scale, check_scale
from . import catalogue, execution, notebooks
from .gpu_estimates import ESTIMATES, NETWORK_SECONDS, NETWORK_SHARE, in_priority_order

# The order a batch takes pages in (issue 47): the pages whose verdicts need the papers' accuracy
# first, then the rest in catalogue order.
NOTEBOOK_PACKAGES = ("papermill", "nbclient", "nbformat", "ipykernel", "jupytext")
DATASETS_OF_PART = {"smith": ("mnist",), "across": ("cifar10", "mnist")}  # other parts: CIFAR-10


class BatchError(ValueError):
    """A batch that must not start (the message names what is missing and how to provide it)."""


def everything() -> list[str]:
    """:data:`PRIORITY`, then every other notebook in catalogue (ID) order."""
    return in_priority_order(notebooks.discover())


def _smoke_times() -> dict[str, float]:
    from .catalogue import smoke_times

    return {k: float(v["seconds"]) for k, v in smoke_times().items() if isinstance(v, dict) and v.get("seconds")}


def _runs_at(figure_id: str, scale: str, book_dir: Path) -> tuple[str, list[dict]]:
    """The notebook's current source hash, and the book's results of ``figure_id`` at ``scale``
    (the page itself, or the verdicts kept beside a page of a higher scale)."""
    info = notebooks.get_notebook(figure_id)
    runs = []
    for res in (info.book_notebook(book_dir).with_suffix(".results.json"), execution.beside_path(info, scale, book_dir)):
        try:
            results = json.loads(res.read_text())
        except (OSError, ValueError):
            continue
        if results.get("scale") == scale:
            runs.append(results)
    return catalogue.source_hash(info.source), runs


def estimate(figure_id: str, scale: str, book_dir: Path = paths.BOOK_DIR, *, prefetched: bool = False,
             workers: int = 1) -> float | None:
    """Seconds a run of ``figure_id`` at ``scale`` is expected to take, or None when unknown;
    ``prefetched``: its networks are already trained (a batch's lanes trained them ahead), so a
    table estimate loses its :data:`NETWORK_SHARE`; ``workers``: its stitch grids run on a local
    Dask cluster of that many processes sharing the device (``STITCHKIT_DASK``), so the rest of
    a table estimate is divided by the measured gain of that many processes (:func:`lane_slowdown`;
    none until measured). (A measured run's wall time is taken as it is, whether or not its
    networks were cached or its grids spread then.)"""
    if scale == "smoke":
        return _smoke_times().get(figure_id)
    want, runs = _runs_at(figure_id, scale, book_dir)
    walls = {r.get("source_sha256") == want: float(w) for r in runs
             if (w := (r.get("provenance") or {}).get("wall_seconds"))}
    if True in walls:
        return walls[True]
    # a run of an older notebook may have had another preset: the table's estimate comes first
    table = ESTIMATES.get(scale, {}).get(figure_id)
    if table is not None:
        share = NETWORK_SHARE.get(scale, {}).get(figure_id, 0.0)
        rest = (table - share) * (lane_slowdown(workers, scale) / workers if workers > 1 else 1.0)
        return rest + (0.0 if prefetched else share)
    return walls.get(False)


LANES_FILE = paths.REPO_ROOT / "benchmarks" / "spot" / "gpu-lanes.json"


def lane_slowdown(lanes: int, scale: str = "gpu", measured: Path | None = None) -> float:
    """How much longer each of ``lanes`` concurrent processes takes than one alone, as measured by
    ``benchmarks/gpu_lanes.py`` (the row of that many processes, or the next larger one measured);
    without a measurement, ``lanes``: sharing is planned as gaining nothing until it is shown to."""
    if lanes <= 1:
        return 1.0
    path = measured or LANES_FILE
    try:
        rows = json.loads(Path(path).read_text())["rows"]
        fits = sorted((r["k"], float(r["slowdown"])) for r in rows if r["k"] >= lanes and r.get("slowdown"))
    except (OSError, ValueError, KeyError, TypeError):
        fits = []
    return fits[0][1] if fits and scale != "smoke" else float(lanes)


def prefetch_seconds(ids: Iterable[str], scale: str, lanes: int) -> float:
    """Estimated seconds for ``lanes`` processes to train the networks of the pages ``ids``
    (:func:`networks_of`) ahead: the busiest lane's share at :data:`NETWORK_SECONDS` each (a
    network of a family with no figure there counts as 60 s)."""
    per = NETWORK_SECONDS.get(scale, {})
    secs = sorted((per.get(run[0].model, 60.0) for run in network_runs(networks_of(ids, scale))), reverse=True)
    return max((sum(secs[k::lanes]) for k in range(lanes)), default=0.0)


def current_at(figure_id: str, scale: str, book_dir: Path = paths.BOOK_DIR) -> bool:
    """Whether the book holds a run of ``figure_id`` at ``scale`` of its current notebook (the
    page itself, or the verdicts kept beside a page of a higher scale)."""
    want, runs = _runs_at(figure_id, scale, book_dir)
    return any(r.get("source_sha256") == want for r in runs)


@dataclass(frozen=True)
class Decision:
    id: str
    run: bool
    why: str
    estimate: float | None = None
    lane: int = 0  # which of the batch's lanes (concurrent processes) runs it


def plan(scale: str, budget: float | None = None, ids: Iterable[str] | None = None, *,
         book_dir: Path = paths.BOOK_DIR, lanes: int = 1, workers: int = 1) -> list[Decision]:
    """What a batch at ``scale`` within ``budget`` seconds would do with each page of ``ids``
    (default: :func:`everything`, in priority order): run it, or skip it and why. Named pages are
    run even when current (a re-run asked for), and one without a preset at ``scale`` is an error
    naming the scales it has; the default list skips both. With ``lanes`` > 1 the pages run in
    that many concurrent processes (:func:`stitchkit.book.transfer.run_lanes`): each page goes, in priority order, to the
    lane with the least estimated work, if its estimate fits the budget left there."""
    check_scale(scale)
    for name, n in (("lanes", lanes), ("workers", workers)):
        if not (isinstance(n, int) and n >= 1):
            raise ValueError(f"{name} must be a whole number >= 1, got {n!r}")
    if lanes > 1 and workers > 1:
        raise ValueError("choose lanes (pages in concurrent processes) or workers (each page's stitch grids on a "
                         f"local Dask cluster), not both: got lanes={lanes}, workers={workers}")
    named = ids is not None
    ids = list(dict.fromkeys(ids if named else everything()))
    for figure_id in ids:
        notebooks.get_notebook(figure_id)  # an unknown ID is an error naming the valid ones, before anything runs
    # with lanes or workers, the networks of every page that could run are trained ahead, in as many
    # processes (prefetch); each lane shares the device, and so does each worker
    parallel = max(lanes, workers)
    current = {i: not named and _has_preset(i, scale) and current_at(i, scale, book_dir) for i in ids}
    candidates = [i for i in ids if _has_preset(i, scale) and not current[i]]
    ahead = prefetch_seconds(candidates, scale, parallel) * lane_slowdown(parallel, scale) if parallel > 1 else 0.0
    prefetched = bool(ahead)
    slow = lane_slowdown(lanes, scale)
    load = [ahead] * lanes
    out = []
    for figure_id in ids:
        try:
            check_figure_scale(figure_id, scale)
        except UnknownScaleError as exc:
            if named:  # a page asked for by name that cannot run at the scale is a bad input
                raise
            out.append(Decision(figure_id, False, str(exc)))
            continue
        if current[figure_id]:
            out.append(Decision(figure_id, False, f"current at {scale}"))
            continue
        est = estimate(figure_id, scale, book_dir, prefetched=prefetched, workers=workers)
        if est is not None:
            est *= slow  # each lane shares the device (lane_slowdown)
        if budget is not None and est is None:
            out.append(Decision(figure_id, False, f"no estimate at {scale}: a batch with a budget cannot know it finishes"))
            continue
        lane = min(range(lanes), key=lambda k: load[k])
        left = float("inf") if budget is None else float(budget) - load[lane]
        if est is not None and est > left:
            out.append(Decision(figure_id, False, f"estimate {est:.0f} s > {left:.0f} s left", est))
            continue
        load[lane] += est or 0.0
        where = f" (lane {lane + 1} of {lanes})" if lanes > 1 else ""
        out.append(Decision(figure_id, True, ("runs" if est is None else f"estimate {est:.0f} s") + where, est, lane))
    return out


def matmul_peak(size: int = 8192, repeats: int = 20) -> float | None:
    """The bf16 matrix-multiply rate (FLOP/s) of the CUDA GPU here, measured (``repeats`` products of
    two ``size`` x ``size`` matrices after a warm-up: a few seconds): what a page's training rate is
    a share of in the batch's log (issue 47). None without a CUDA GPU."""
    import time

    import torch

    if not torch.cuda.is_available():
        return None
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize()
    return 2 * size ** 3 * repeats / (time.perf_counter() - start)


def networks_of(ids: Iterable[str], scale: str) -> list:
    """The trained networks the pages ``ids`` need at ``scale``, once each, in order: from each
    page's preset at ``scale`` whose config says (a ``networks()`` method); pages whose config does not
    train theirs inside the page as before."""
    from ..registry.figures import presets

    out, seen = [], set()
    for figure_id in ids:
        cfg = (presets(figure_id) or {}).get(scale)
        for spec in (cfg.networks() if callable(getattr(cfg, "networks", None)) else []):
            if spec not in seen:
                seen.add(spec)
                out.append(spec)
    return out


def network_runs(specs: list) -> list[list]:
    """``specs`` grouped by training run: the snapshots of one run (specs that differ only in
    ``train.stop``) together, so that one training stores them all on the way; in order."""
    from dataclasses import replace

    runs: dict = {}
    for spec in specs:
        runs.setdefault(replace(spec, train=replace(spec.train, stop=1.0)), []).append(spec)
    return list(runs.values())


def train_networks(ids: Iterable[str], scale: str, lane: int = 0, lanes: int = 1, *, progress: bool = False) -> int:
    """Train (or find in the cache) every ``lanes``-th training run of :func:`networks_of`
    (:func:`network_runs`) from the ``lane``-th: one process of :func:`prefetch`. Returns how many
    networks it holds."""
    from ..networks import zoo

    mine = network_runs(networks_of(ids, scale))[lane::lanes]
    for run in mine:
        if len(run) > 1 or run[0].train.stop < 1:
            zoo.train_snapshots(run, progress=progress)
        else:
            network.load_or_train(run[0], progress=progress)
    return sum(len(run) for run in mine)


def prefetch(ids: Iterable[str], scale: str, processes: int) -> int:
    """Train the networks the pages ``ids`` need (:func:`networks_of`) in ``processes`` concurrent
    processes (``stitchkit networks``), before the pages run; returns how many. A failure stops
    the batch before any page starts."""
    import subprocess
    import sys
    import time

    ids = list(ids)
    n = len(networks_of(ids, scale))
    k = min(processes, len(network_runs(networks_of(ids, scale))))
    if k:
        t0 = time.monotonic()
        print(f"prefetch: {n} networks in {k} processes", flush=True)
        codes = wait_all([subprocess.Popen([sys.executable, "-m", "stitchkit", "networks", *ids, "--scale", scale,
                                             "--lane", str(j), "--lanes", str(k)]) for j in range(k)])
        if any(codes):
            raise BatchError(f"training the pages' networks failed (processes exited {codes}); no page was started")
        print(f"prefetch done in {time.monotonic() - t0:.0f} s", flush=True)
    return n


def wait_all(procs) -> list[int]:
    """Wait for every process; a signal to this one is passed on to each (each stops its kernel)."""
    import signal

    def forward(signum, frame):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    old = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        return [p.wait() for p in procs]
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _has_preset(figure_id: str, scale: str) -> bool:
    try:
        check_figure_scale(figure_id, scale)
        return True
    except UnknownScaleError:
        return False


def datasets_of(ids: Iterable[str]) -> list[str]:
    """The data sets the pages ``ids`` read (by their part: :data:`DATASETS_OF_PART`)."""
    return sorted({d for i in ids for d in DATASETS_OF_PART.get(notebooks.get_notebook(i).part, ("cifar10",))})


def check_data(ids: Iterable[str], root=None) -> None:
    """Raise :class:`stitchkit.data.integrity.DataNotFoundError` (exit 2 on the command line), listing
    every place searched, unless each data set the pages ``ids`` read is found: before any compute."""
    from ..data.archives import locate

    for name in datasets_of(ids):
        locate(name, root)


def preflight(ids: Iterable[str], *, require_gpu: bool = False, root=None, kernel: bool = False) -> list[str]:
    """Check, before any training, what the pages ``ids`` need: a CUDA GPU (``require_gpu``), the
    packages that execute a notebook, the data archives of their parts, and with ``kernel`` a
    notebook kernel that runs (:func:`kernel_check`). Returns one line per check passed; raises
    :class:`BatchError` naming every missing piece."""
    problems, lines = [], []
    if require_gpu:
        import torch

        if not torch.cuda.is_available():
            problems.append("no CUDA GPU visible to torch (torch.cuda.is_available() is False)")
        else:
            lines.append(f"GPU: {torch.cuda.get_device_name()} (torch {torch.__version__})")
    missing = [p for p in NOTEBOOK_PACKAGES if importlib.util.find_spec(p) is None]
    if missing:
        problems.append(f"packages missing: {', '.join(missing)} (on a lent machine: `make wheels` here, carry .whl, "
                        "and install them first, as `make gpu-batch` does)")
    else:
        lines.append(f"packages: {', '.join(NOTEBOOK_PACKAGES)}")
    from ..data.archives import locate
    from ..data.integrity import DataNotFoundError

    for name in datasets_of(ids):
        try:
            lines.append(f"data: {name} at {locate(name, root)}")
        except DataNotFoundError as exc:
            problems.append(str(exc).splitlines()[0] + " (set STITCHKIT_DATA_ROOT to the folder of the archives)")
    if not problems and kernel:
        try:
            lines.append(kernel_check(require_gpu))
        except Exception as exc:  # noqa: BLE001 - whatever stops a kernel stops every page: name it
            problems.append(f"a notebook kernel cannot run this library: {type(exc).__name__}: {str(exc)[:500]}")
    if problems:
        raise BatchError("the batch cannot start:\n  - " + "\n  - ".join(problems))
    return lines


def kernel_check(require_gpu: bool = False) -> str:
    """Execute a one-cell notebook the way every page is executed (papermill, this library's kernel
    manager): the kernel starts, imports the library and torch, and sees the GPU where one is
    required. Seconds; it catches a broken install before any training."""
    import tempfile

    import nbformat
    import papermill

    from .kernels import ipc_kernel_manager

    code = ("import torch, stitchkit\n"
            + ("assert torch.cuda.is_available(), 'the kernel sees no CUDA GPU'\n" if require_gpu else "")
            + "print('kernel ok: torch', torch.__version__)")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    with tempfile.TemporaryDirectory(prefix="stitchkit-kernel-check-") as tmp:
        src, out = Path(tmp) / "check.ipynb", Path(tmp) / "out.ipynb"
        nbformat.write(nb, src)
        papermill.execute_notebook(str(src), str(out), kernel_name="python3", cwd=str(paths.REPO_ROOT),
                                   progress_bar=False, kernel_manager_class=ipc_kernel_manager(),
                                   execution_timeout=120)
    return "kernel: starts, imports stitchkit and torch" + (", sees the GPU" if require_gpu else "")
