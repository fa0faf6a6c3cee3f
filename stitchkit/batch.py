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
run and pack through :func:`stitchkit.transfer.pack_pages`; the archive's manifest keeps the plan
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

from . import execution, paths
from .scales import UnknownScaleError, check_figure_scale, check_scale

# The order a batch takes pages in (issue 47): the pages whose verdicts need the papers' accuracy
# first, then the rest in catalogue order.
PRIORITY = ("H-F2", "B-F2A", "B-F2C", "B-F3A", "B-F3C", "B-F6", "B-F8", "H-F4", "S-4.2", "S-FC6", "J-T1",
            "J-F1", "J-F2")

# Device seconds of a page at a scale where the book has no run of it at that scale yet, with
# their source. H-F2 at gpu: 165 stitches at 2.0-4.6 s (4 epochs) + ~70 training-length stitches at
# 6.4-16.5 s (16 epochs) + 133 s for its two networks, measured on an H100 on 2026-11-27
# (benchmarks/spot/hernandez-f2-gpu-length.json).
#
# Smith & Marcu's ResNet pages at gpu, until measured: from counts, not from a run. A width-64
# ResNet-18 on 28x28 MNIST (7x7 maps after the ImageNet stem) is launch-bound on an H100: H-F2's stitches
# there took 2.6-5.9 ms a step (benchmarks/spot/hernandez-f2-gpu-length.json, larger maps), so ~4 ms:
# a network (4 epochs of 60k at batch 128, 1,876 steps) ~8 s, a stitch (2 epochs, 938 steps, its
# test) ~4 s. S-F1B: 9 networks (3 data sets x 3 initialisations) + 45 stitches + its negative
# control's 6 + its training-length control's 6 at 2x ~ 330 s. The other ResNet pages share its networks and
# stitches through the cache, so theirs assume S-F1B ran before them in the same batch: S-F1C reads
# ranks of its stitches (~30 s), S-TC1 adds the layer-1 cells of Digit as sender (~100 s), S-FC5 the
# Colour-only and Noise senders (~160 s), S-4.2 greyscale-MNIST networks and their stitches (~240 s).
ESTIMATES: dict[str, dict[str, float]] = {
    "gpu": {"H-F2": 1400.0, "S-F1B": 330.0, "S-F1C": 30.0, "S-TC1": 100.0, "S-FC5": 160.0, "S-4.2": 240.0},
}

NOTEBOOK_PACKAGES = ("papermill", "nbclient", "nbformat", "ipykernel", "jupytext")
DATASETS_OF_PART = {"smith": ("mnist",), "across": ("cifar10", "mnist")}  # other parts: CIFAR-10


class BatchError(ValueError):
    """A batch that must not start (the message names what is missing and how to provide it)."""


def everything() -> list[str]:
    """:data:`PRIORITY`, then every other notebook in catalogue (ID) order."""
    rest = sorted(i for i in execution.discover() if i not in PRIORITY)
    return [*PRIORITY, *rest]


def _smoke_times() -> dict[str, float]:
    from .catalogue import smoke_times

    return {k: float(v["seconds"]) for k, v in smoke_times().items() if isinstance(v, dict) and v.get("seconds")}


def _runs_at(figure_id: str, scale: str, book_dir: Path) -> tuple[str, list[dict]]:
    """The notebook's current source hash, and the book's results of ``figure_id`` at ``scale``
    (the page itself, or the verdicts kept beside a page of a higher scale)."""
    info = execution.get_notebook(figure_id)
    runs = []
    for res in (info.book_notebook(book_dir).with_suffix(".results.json"), execution.beside_path(info, scale, book_dir)):
        try:
            results = json.loads(res.read_text())
        except (OSError, ValueError):
            continue
        if results.get("scale") == scale:
            runs.append(results)
    return execution.source_hash(info.source), runs


def estimate(figure_id: str, scale: str, book_dir: Path = paths.BOOK_DIR) -> float | None:
    """Seconds a run of ``figure_id`` at ``scale`` is expected to take, or None when unknown."""
    if scale == "smoke":
        return _smoke_times().get(figure_id)
    want, runs = _runs_at(figure_id, scale, book_dir)
    walls = {r.get("source_sha256") == want: float(w) for r in runs
             if (w := (r.get("provenance") or {}).get("wall_seconds"))}
    if True in walls:
        return walls[True]
    # a run of an older notebook may have had another preset: the table's estimate comes first
    return ESTIMATES.get(scale, {}).get(figure_id, walls.get(False))


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


def plan(scale: str, budget: float | None = None, ids: Iterable[str] | None = None, *,
         book_dir: Path = paths.BOOK_DIR) -> list[Decision]:
    """What a batch at ``scale`` within ``budget`` seconds would do with each page of ``ids``
    (default: :func:`everything`, in priority order): run it, or skip it and why. Named pages are
    run even when current (a re-run asked for), and one without a preset at ``scale`` is an error
    naming the scales it has; the default list skips both."""
    check_scale(scale)
    named = ids is not None
    ids = list(dict.fromkeys(ids if named else everything()))
    for figure_id in ids:
        execution.get_notebook(figure_id)  # an unknown ID is an error naming the valid ones, before anything runs
    from . import experiments

    experiments.load_all()
    left = float("inf") if budget is None else float(budget)
    out = []
    for figure_id in ids:
        try:
            check_figure_scale(figure_id, scale)
        except UnknownScaleError as exc:
            if named:  # a page asked for by name that cannot run at the scale is a bad input
                raise
            out.append(Decision(figure_id, False, str(exc)))
            continue
        if not named and current_at(figure_id, scale, book_dir):
            out.append(Decision(figure_id, False, f"current at {scale}"))
            continue
        est = estimate(figure_id, scale, book_dir)
        if budget is not None and est is None:
            out.append(Decision(figure_id, False, f"no estimate at {scale}: a batch with a budget cannot know it finishes"))
            continue
        if est is not None and est > left:
            out.append(Decision(figure_id, False, f"estimate {est:.0f} s > {left:.0f} s left", est))
            continue
        left -= est or 0.0
        out.append(Decision(figure_id, True, "runs" if est is None else f"estimate {est:.0f} s", est))
    return out


def datasets_of(ids: Iterable[str]) -> list[str]:
    """The data sets the pages ``ids`` read (by their part: :data:`DATASETS_OF_PART`)."""
    return sorted({d for i in ids for d in DATASETS_OF_PART.get(execution.get_notebook(i).part, ("cifar10",))})


def check_data(ids: Iterable[str], root=None) -> None:
    """Raise :class:`stitchkit.integrity.DataNotFoundError` (exit 2 on the command line), listing
    every place searched, unless each data set the pages ``ids`` read is found: before any compute."""
    from .archives import locate

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
    from .archives import DataNotFoundError, locate

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
