"""Executing notebooks: one-off runs, sweeps, and the book.

Notebook sources are jupytext percent files ``notebooks/<ID>.py`` with a cell tagged
``parameters`` whose first parameter is ``scale``. Execution reads the source with jupytext,
runs it with papermill (parameters injected), and writes beside the executed ``<ID>.ipynb`` a
``<ID>.results.json`` (written by the notebook through :class:`stitchkit.verdicts.results.Run`, then
completed here with the wall time and the source's hash). Under the page title go a result
box (every claim with the paper's value, ours and the verdict, at a glance) and a provenance
banner (scale, commit, device, precision, wall time), both rendered by :mod:`stitchkit.book.pages`;
the parameter cells are collapsed, and anything the kernel wrote to stderr (warnings, which can
leak local paths) is shown in the terminal instead of on the page. Output folders and the errors
of runs and sweeps are :mod:`stitchkit.book.runs`.

- ``run_notebook``: a one-off run into ``runs/<ID>/<stamp>-<scale>/`` (never over the book).
- ``sweep``: the grid of runs, locally or on a Dask cluster, collected into one table.
- ``build_book``: executes the pages that have no executed page yet (and, with
  ``rerun_behind``, those behind their notebook or library; everything at ``--scale``), then
  compiles the book with Jupyter Book, warnings as errors. A page that is behind is rendered as
  committed and marked behind on its own page, its part page and ``stitchkit list``: on a fresh
  clone with every page behind its code the book still builds in minutes.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..base import figure_files, paths
from ..base.cluster import connect
from ..base.figure_files import FIGURES_ENV
from ..base.fileio import atomic_write_json, atomic_write_text, claimed, fresh_folder, output_folder
from ..registry import figures
from ..registry.figures import SCALES
from ..registry.scales import UnknownParameterError, check_figure_scale, check_scale, preset
from ..registry.staleness import behind_reason, same_results
from ..verdicts.results import RESULTS_ENV
from . import bookpages
from .catalogue import source_hash
from .kernels import interruption, ipc_kernel_manager, mark_interrupted, stop_kernels_on_signals  # noqa: F401
from .notebooks import NotebookInfo, discover, get_notebook
from .pages import figure_first, page_boxes, put_under_title, refresh_boxes, tidy_page
from .runs import SweepFailed, SweepInterrupted, Terminated, describe_failure, grid, results_row


def check_run(info: NotebookInfo, scale: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every check a run makes before compute, each once (issue 48), in the order a user's
    mistakes are best reported: the scale's name, the parameters' names, the figure's scales, then
    each value (:func:`stitchkit.registry.scales.validate`) and the scale's preset with them (the config's
    rules between fields, its ``check``). Returns the values as the config reads them (None: the
    preset's). Nothing downstream checks them again; the kernel checks once more, in the notebook's
    first cell, what it is handed."""
    check_scale(scale)
    params = dict(params or {})
    if "scale" in params:
        raise UnknownParameterError(f"give the scale once, with --scale, not as a parameter (got scale={params['scale']!r})")
    valid = [n for n in info.parameter_names() if n != "scale"]  # the scale is given with --scale
    unknown = sorted(set(params) - set(valid))
    unused = [n for n in unknown if info.id in figures.BY_ID and n in figures.BY_ID[info.id].unused]
    if unused:
        raise UnknownParameterError(f"{info.id} does not use {', '.join(unused)} (a field of the config it shares "
                                    f"with other pages); its parameters: {', '.join(valid)}")
    if unknown:
        raise UnknownParameterError(f"unknown parameter(s) {', '.join(unknown)} for {info.id}; "
                                    f"valid: {', '.join(valid)}")
    check_figure_scale(info.id, scale)
    presets = figures.presets(info.id)
    if presets is None:  # a notebook outside the registry (a test's own): its values go in as given
        return params
    cfg = preset(presets, scale, **params)
    return {k: None if v is None else getattr(cfg, k) for k, v in params.items()}


def _for_papermill(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as papermill can write them into a cell: tuples become lists (papermill writes
    an unknown type as its string; the notebook's config turns lists back into tuples)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def execute(info: NotebookInfo, out_notebook: Path, scale: str, params: Mapping[str, Any] | None = None, *,
            progress: bool = True) -> dict:
    """Execute ``info`` at ``scale`` into ``out_notebook`` (checked first: :func:`check_run`);
    returns the completed results dict."""
    return _execute(info, out_notebook, scale, check_run(info, scale, params), progress=progress)


def _execute(info: NotebookInfo, out_notebook: Path, scale: str, params: Mapping[str, Any], *,
             progress: bool = True) -> dict:
    """:func:`execute` with ``params`` already checked by :func:`check_run`."""
    import jupytext
    import nbformat
    import papermill

    out_notebook = Path(out_notebook).resolve()
    out_notebook.parent.mkdir(parents=True, exist_ok=True)
    results_path = out_notebook.with_suffix(".results.json")
    # the kernel writes its results beside, and they replace the page's only when the run succeeds:
    # a run that fails or is stopped leaves neither a stray results file beside its partial notebook
    # nor a page whose results are newer than its notebook
    running_results = out_notebook.with_name(f".{out_notebook.stem}.results.running.json")
    tmp_nb = out_notebook.with_name(f".{out_notebook.name}.running.ipynb")
    running_figures = figure_files.running_folder(out_notebook)
    nb = jupytext.read(info.source)
    env_before = {k: os.environ.get(k) for k in (RESULTS_ENV, FIGURES_ENV)}
    os.environ[RESULTS_ENV] = str(running_results)
    os.environ[FIGURES_ENV] = str(running_figures)  # Run.figure writes each figure's SVG and CSV there
    running_results.unlink(missing_ok=True)
    shutil.rmtree(running_figures, ignore_errors=True)
    t0 = time.perf_counter()
    # A failed (or interrupted) run keeps what it executed as <ID>.failed.ipynb beside the
    # intended output; the exception carries its path (``failed_notebook``) and says it.
    failed_nb = out_notebook.with_name(f"{out_notebook.stem}.failed.ipynb")
    failed_nb.unlink(missing_ok=True)
    tmp_nb.unlink(missing_ok=True)  # a run killed with -9 leaves its running copy: this run starts clean
    stopped: dict[str, str] = {}
    try:
        with stop_kernels_on_signals(stopped):
            try:
                papermill.execute_notebook(nb, str(tmp_nb), parameters={"scale": scale, **_for_papermill(params)},
                                           kernel_name="python3", language="python", cwd=str(paths.REPO_ROOT),
                                           progress_bar=progress, kernel_manager_class=ipc_kernel_manager())
            except Exception:
                if stopped:  # the kernel died because this process was told to stop: say that, not the death
                    raise interruption(stopped["signal"]) from None
                raise
            if stopped:
                raise interruption(stopped["signal"])
        if not running_results.exists():
            raise RuntimeError(f"{info.id} finished without writing its results (the notebook must call "
                               "run.save())")
    except BaseException as exc:
        running_results.unlink(missing_ok=True)
        shutil.rmtree(running_figures, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(tmp_nb)  # a full disk while papermill wrote the notebook: name where
        if tmp_nb.exists() and not _readable_notebook(tmp_nb):
            # papermill was cut off mid-write (a full disk): a truncated notebook is no notebook. Keep a
            # small valid one that says so, if even that can be written
            tmp_nb.unlink(missing_ok=True)
            try:
                stub = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
                    f"**This run of {info.id} failed, and its partial notebook could not be kept whole** "
                    f"({describe_failure(exc)}).")])
                atomic_write_text(tmp_nb, nbformat.writes(stub))
            except Exception:  # the disk is still full: no partial notebook, and the message says so
                tmp_nb.unlink(missing_ok=True)
                exc.add_note("no partial notebook was kept (it could not be written whole)")
        if tmp_nb.exists():
            if stopped:
                mark_interrupted(tmp_nb, stopped["signal"])
            os.replace(tmp_nb, failed_nb)
            exc.failed_notebook = str(failed_nb)
            exc.add_note(f"partial notebook: {failed_nb}")
        raise
    finally:
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    wall = time.perf_counter() - t0
    results = json.loads(running_results.read_text())
    results["provenance"]["wall_seconds"] = round(wall, 1)
    source = info.source.resolve()
    results["source"] = str(source.relative_to(paths.REPO_ROOT) if source.is_relative_to(paths.REPO_ROOT) else source)
    results["source_sha256"] = source_hash(info.source)
    executed = nbformat.read(tmp_nb, as_version=4)
    tidy_page(executed)
    figure_files.link_figure_files(executed, out_notebook.stem, results.get("figures") or {})
    put_under_title(executed, page_boxes(results))
    refresh_boxes(executed, results)  # adds the folded provenance and rerun commands
    figure_first(executed)  # the main figure between the verdicts and those folds
    # the figure files, the page and its results, one after the other (the page links the files)
    figure_files.replace_folder(running_figures, figure_files.figures_folder(out_notebook))
    atomic_write_text(out_notebook, nbformat.writes(executed))
    atomic_write_json(results_path, results)
    running_results.unlink(missing_ok=True)
    tmp_nb.unlink(missing_ok=True)
    return results


# --------------------------------------------------------------------------------------------
# One-off runs and sweeps


def _readable_notebook(path: Path) -> bool:
    """Whether ``path`` holds a whole notebook (valid JSON with cells), not one cut off mid-write."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("cells"), list)


def _stamp() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def run_notebook(figure_id: str, scale: str, params: Mapping[str, Any] | None = None, *,
                 out_dir: Path | None = None, progress: bool = True) -> tuple[Path, dict]:
    """A one-off run into ``runs/<ID>/<stamp>-<scale>/`` (the book is never touched).

    Raises :class:`OutputFolderError` before any compute if the folder is not writable; a run
    that fails keeps its partial notebook as ``<ID>.failed.ipynb`` there (see :func:`execute`).
    """
    checked = check_run(get_notebook(figure_id), scale, params)  # before the output folder is made
    return _run_checked(figure_id, scale, checked, out_dir=out_dir, progress=progress)


def _run_checked(figure_id: str, scale: str, params: Mapping[str, Any], out_dir: Path | None = None,
                 progress: bool = True) -> tuple[Path, dict]:
    """:func:`run_notebook` with ``params`` already checked by :func:`check_run`."""
    info = get_notebook(figure_id)
    out_dir = output_folder(out_dir or fresh_folder(paths.RUNS_DIR / figure_id, f"{_stamp()}-{scale}"))
    out = out_dir / f"{figure_id}.ipynb"
    with claimed(out_dir):  # a second run into the same --out is refused while this one writes there
        return out, _execute(info, out, scale, params, progress=progress)


_STATUS_COLUMNS = ("status", "error", "notebook")


def _failed_row(params: Mapping[str, Any], exc: BaseException) -> dict:
    return {**params, "status": "failed", "error": describe_failure(exc),
            "notebook": getattr(exc, "failed_notebook", None)}


def _sweep_one(figure_id: str, scale: str, params: dict, out_dir: str) -> dict:
    """One run of a sweep, its ``params`` checked by the sweep: its results row with ``status``
    'ok', or, if it failed, its parameters with ``status`` 'failed', the ``error`` and the partial
    ``notebook`` (never raises an Exception)."""
    try:
        out, results = _run_checked(figure_id, scale, params, out_dir=Path(out_dir), progress=False)
    except Exception as exc:
        return _failed_row(params, exc)
    return {**results_row(params, results), "status": "ok", "error": "", "notebook": str(out)}


def sweep(figure_id: str, scale: str, values: Mapping[str, Iterable[Any]], *, out_dir: Path | None = None,
          dask_address: str | None = None, dask_timeout: float = 10.0):
    """Run the grid of ``values`` (name -> list) at ``scale``; returns a DataFrame (one row per
    run: parameters, numbers, claim verdicts, wall time, ``status``, ``error``, ``notebook``),
    also saved as ``results.csv``, rewritten as each run finishes.

    ``dask_address`` submits each run to a Dask cluster (workers need this repository installed
    and the data root available); a scheduler that does not answer within ``dask_timeout``
    seconds raises :class:`DaskSchedulerError`. Otherwise runs execute one after another here.
    The output folder is checked before any run (:class:`OutputFolderError`). If any run failed,
    raises :class:`SweepFailed` carrying the table, after saving it.
    """

    info = get_notebook(figure_id)
    check_scale(scale)
    combos = grid(values)
    checked = [check_run(info, scale, c) for c in combos]  # every point, once, before any runs
    out_dir = output_folder(out_dir or fresh_folder(paths.RUNS_DIR / "sweeps", f"{figure_id}-{_stamp()}-{scale}"))
    with claimed(out_dir):  # a second sweep into the same --out is refused while this one writes there
        return _sweep_into(out_dir, figure_id, scale, values, combos, checked, dask_address, dask_timeout)


def _sweep_into(out_dir: Path, figure_id: str, scale: str, values, combos: list[dict], checked: list[dict],
                dask_address: str | None, dask_timeout: float):
    """:func:`sweep`'s runs, into its claimed output folder."""
    import pandas as pd

    csv = out_dir / "results.csv"
    dirs = [str(out_dir / f"run{i:03d}") for i in range(len(combos))]
    rows: list[dict | None] = [None] * len(combos)

    def table_of(done: list[dict]) -> pd.DataFrame:
        table = pd.DataFrame(done)
        tail = [c for c in _STATUS_COLUMNS if c in table.columns]
        return table[[c for c in table.columns if c not in tail] + tail]

    def finished(i: int, row: dict) -> None:
        rows[i] = row
        atomic_write_text(csv, table_of([r for r in rows if r is not None]).to_csv(index=False))

    if dask_address:
        from distributed import as_completed

        with connect(dask_address, dask_timeout) as client:
            futures = client.map(_sweep_one, [figure_id] * len(combos), [scale] * len(combos), checked, dirs,
                                 pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            for future in as_completed(futures):
                i = index[future.key]
                try:
                    row = future.result()
                except Exception as exc:  # the task itself was lost (worker died, cancelled, ...)
                    row = _failed_row(combos[i], exc)
                finished(i, row)
    else:
        from tqdm.auto import tqdm

        i = 0
        try:
            for i, (c, d) in enumerate(tqdm(list(zip(checked, dirs)), desc="sweep")):
                finished(i, _sweep_one(figure_id, scale, c, d))
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM under on_sigterm(): say where it stopped
            rows[i] = {**combos[i], "status": "interrupted", "error": describe_failure(exc),
                       "notebook": getattr(exc, "failed_notebook", None)}
            for k in range(i + 1, len(combos)):
                rows[k] = {**combos[k], "status": "pending", "error": "", "notebook": None}
            table = table_of(rows)
            atomic_write_text(csv, table.to_csv(index=False))
            raise SweepInterrupted(table, csv, "SIGTERM" if isinstance(exc, Terminated) else "SIGINT") from None
    table = table_of(rows)
    table.attrs["csv"] = str(csv)
    if "status" in table and (table["status"] != "ok").any():
        raise SweepFailed(table, csv, list(values))
    return table


# --------------------------------------------------------------------------------------------
# The book


# the book shows the page of the highest scale a figure was run at; lower scales' verdicts go beside it
SCALE_RANK = {s: i for i, s in enumerate(SCALES)}


def _results_of(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text()) if path.exists() else None
    except json.JSONDecodeError:
        return None


def beside_path(info: NotebookInfo, scale: str, book_dir: Path = paths.BOOK_DIR) -> Path:
    """Where a run at ``scale`` keeps its verdicts beside a page of a higher scale."""
    return book_dir / info.part / f"{info.id}.{scale}.results.json"


def stale_reason(info: NotebookInfo, book_dir: Path = paths.BOOK_DIR, *, scale: str | None = None) -> str | None:
    """Why the committed page of ``info`` must be re-executed (its notebook changed, or a library
    module its run imported: :mod:`stitchkit.registry.staleness`), or None if it is current. With
    ``scale`` (the scale a re-run would use): a page of a higher scale whose notebook has changed
    is current when its verdicts at ``scale``, kept beside it, are of the current notebook (the
    page itself waits for a machine of its own scale)."""
    nb = info.book_notebook(book_dir)
    res = nb.with_suffix(".results.json")
    if not nb.exists() or not res.exists():
        return "no executed page"
    results = _results_of(res)
    if results is None:
        return "unreadable results file"
    current = source_hash(info.source)
    behind = ("source changed since the committed run" if results.get("source_sha256") != current
              else behind_reason(results))
    if behind:
        shown = results.get("scale")
        if scale is not None and shown in SCALE_RANK and SCALE_RANK[shown] > SCALE_RANK[scale]:
            beside = _results_of(beside_path(info, scale, book_dir))
            if beside is not None and beside.get("source_sha256") == current and not behind_reason(beside):
                return None
    return behind


# the reasons :func:`stale_reason` gives for a page the book cannot show at all: executed even by a plain build
NO_PAGE = ("no executed page", "unreadable results file")


def build_book(scale: str | None = None, *, stale_scale: str = "demo", build: bool = True,
               output: Path | None = None, book_dir: Path = paths.BOOK_DIR, progress: bool = True,
               problems: dict[str, str] | None = None, rerun_behind: bool = False,
               only: Iterable[str] | None = None) -> Path | None:
    """Execute the notebooks that have no executed page into ``book/`` (with ``rerun_behind``
    also those that are behind: :func:`stale_reason`; all of them at ``scale`` if given), then build.
    ``only`` limits the execution to those pages, in the order given (every page is still built):
    a re-run of the whole book can go page by page, each committed as it lands.

    Without ``rerun_behind`` a page that is behind is not re-run: it is rendered as committed,
    marked behind where it is shown (its provenance box, its part page, ``stitchkit list``), and
    named in one line here, so that ``make book`` renders the committed runs in minutes whatever
    the library's state; ``make rerun`` (``stitchkit book --rerun-behind``) re-runs them, each
    resuming from the artifact cache.

    Returns the HTML folder, or None with ``build=False``. One bad notebook never stops the book
    (issue 50): a notebook whose parameters cell cannot be read, or a stale page whose re-run
    fails, is named in a line on stderr and in ``problems`` (figure ID -> reason), its committed
    page (if any) stays as it was, and every other page is executed and built; a stop from
    outside (Ctrl-C, SIGTERM) still stops it.
    """
    if scale is not None:
        check_scale(scale)
    check_scale(stale_scale)
    problems = {} if problems is None else problems
    broken: dict[str, str] = {}
    infos = discover(broken=broken)
    for fid, why in broken.items():
        problems[fid] = why
        print(f"[stitchkit] {fid}: not executed: {why}", file=sys.stderr, flush=True)
    if only is not None:
        only = list(only)
        unknown = [fid for fid in only if fid not in infos]
        if unknown:
            raise KeyError(f"unknown page(s) {', '.join(unknown)}; valid: {', '.join(infos)}")
    for info in ([infos[fid] for fid in only] if only is not None else infos.values()):
        reason = f"--scale {scale}" if scale else stale_reason(info, book_dir, scale=stale_scale)
        if not reason:
            print(f"[stitchkit] {info.id}: committed run is current", flush=True)
            continue
        if not scale and not rerun_behind and reason not in NO_PAGE:
            print(f"[stitchkit] {info.id}: behind ({reason}); its committed run is shown, marked behind "
                  "(`make rerun` re-runs the pages that are behind)", flush=True)
            continue
        run_scale = scale or stale_scale
        shown = (_results_of(info.book_notebook(book_dir).with_suffix(".results.json")) or {}).get("scale")
        try:
            if shown in SCALE_RANK and SCALE_RANK[shown] > SCALE_RANK[run_scale]:
                # never replace a page of a higher scale (a GPU run) by a lower one: the run's verdicts go beside it
                beside = beside_path(info, run_scale, book_dir)
                print(f"[stitchkit] executing {info.id} at scale {run_scale} ({reason}); its {shown} page stays "
                      f"shown, these verdicts go beside it ({beside.name})", flush=True)
                before = _results_of(beside)
                with tempfile.TemporaryDirectory() as tmp:
                    atomic_write_json(beside, execute(info, Path(tmp) / f"{info.id}.ipynb", run_scale,
                                                      progress=progress))
            else:
                print(f"[stitchkit] executing {info.id} at scale {run_scale} ({reason})", flush=True)
                beside = info.book_notebook(book_dir).with_suffix(".results.json")
                before = _results_of(beside)
                execute(info, info.book_notebook(book_dir), run_scale, progress=progress)
            _compare_rerun(info.id, before, beside)
        except Exception as exc:  # this page failed: the book goes on without its re-run
            kept = getattr(exc, "failed_notebook", None)
            problems[info.id] = (f"its run at {run_scale} failed ({describe_failure(exc)})"
                                 + (f"; partial notebook: {kept}" if kept else ""))
            print(f"[stitchkit] {info.id}: {problems[info.id]}; its committed page is kept", file=sys.stderr,
                  flush=True)
    if not build:
        return None
    return compile_book(output, problems=problems)


def previous_run(before: Mapping[str, Any], after: Mapping[str, Any], changed: int) -> dict[str, Any]:
    """What a re-run that did not reproduce the run it replaces (``before``) keeps of it in its
    provenance (``previous_run``), for its page to show: when and where that run was made, how many
    values changed (``changed``), each claim whose verdict moved (key -> that run's verdict and
    number), and each network both runs used whose test accuracy differs (the same specification,
    trained again: e.g. on another machine, or after the cache was lost)."""
    prov = before.get("provenance", {})
    now = {c.get("key"): c for c in after.get("claims", [])}
    claims = {c["key"]: {"verdict": c["verdict"], "ours": c.get("ours", "")}
              for c in before.get("claims", []) if c.get("key") in now and now[c["key"]]["verdict"] != c["verdict"]}
    accuracy = {n["key"]: n["accuracy"] for n in prov.get("networks") or ()
                if n.get("key") and n.get("accuracy") is not None}
    networks = [{"model": n.get("model"), "seed": n.get("seed"), "before": accuracy[n["key"]], "after": n["accuracy"]}
                for n in after.get("provenance", {}).get("networks") or ()
                if n.get("key") in accuracy and n.get("accuracy") not in (None, accuracy[n["key"]])]
    return {**{k: prov.get(k) for k in ("commit", "date", "device")}, "changed": changed, "claims": claims,
            "networks": networks}


def _compare_rerun(figure_id: str, before: dict | None, path: Path) -> None:
    """After a re-run written to ``path``: if the run it replaced (``before``, of the same scale)
    had the same numbers, verdicts and texts bit for bit, say so and keep in the provenance when
    the page was first computed (``first_run``: commit, date, wall time, device); else name what
    changed and keep what the page shows of the run it replaced (:func:`previous_run`)."""
    after = _results_of(path)
    if not before or not after or before.get("scale") != after.get("scale"):
        return
    changed = same_results(before, after)
    prov = before.get("provenance", {})
    if changed:
        after["provenance"]["previous_run"] = previous_run(before, after, len(changed))
        atomic_write_json(path, after)
        moved = after["provenance"]["previous_run"]["claims"]
        print(f"[stitchkit] {figure_id}: the re-run changed {len(changed)} value(s) of the run it replaces"
              + (f" and {len(moved)} verdict(s)" if moved else ", no verdict") + ": "
              f"{', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}", flush=True)
        return
    after["provenance"]["first_run"] = prov.get("first_run") or {
        k: prov.get(k) for k in ("commit", "date", "wall_seconds", "device")}
    if prov.get("previous_run"):  # the same results as the run before: what that one replaced still shows
        after["provenance"]["previous_run"] = prov["previous_run"]
    atomic_write_json(path, after)
    print(f"[stitchkit] {figure_id}: the re-run reproduced the run it replaces bit for bit (numbers, verdicts, "
          "texts)", flush=True)


def compile_book(output: Path | None = None, problems: dict[str, str] | None = None, *,
                 root: Path | None = None) -> Path:
    """Jupyter Book 1.x build of the repository root with warnings as errors (execution off).
    ``root``: another folder laid out like it (``book/``, ``_config.yml``, ``_toc.yml``,
    ``benchmarks/``), e.g. the tests' copy, whose generated pages are written there instead."""
    root = Path(root or paths.REPO_ROOT)
    # scorecard, part pages, results.csv/json and _toc.yml from the results files (bad ones left out, named)
    bookpages.write_pages(root / "book", toc=root / "_toc.yml", problems=problems)
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(root), "--builder", "html",
           "-W", "-n", "--keep-going"]
    html = Path(output or root) / "_build" / "html"
    if output is not None:
        cmd += ["--path-output", str(output)]
    if _static_changed(html, root / "book" / "_static"):
        cmd.append("--all")  # Sphinx copies static files only when some page is rebuilt
    subprocess.run(cmd, check=True)
    return html


def _static_changed(html: Path, src: Path) -> bool:
    """Whether a file of the book's static folder (styles, scripts) differs from the built copy:
    an incremental build with no changed page would keep the old one."""
    import filecmp

    built = html / "_static"
    if not built.is_dir():
        return False
    return any(f.is_file() and not ((built / f.relative_to(src)).is_file()
                                    and filecmp.cmp(f, built / f.relative_to(src), shallow=False))
               for f in src.rglob("*"))


__all__ = ["SCALE_RANK", "beside_path", "build_book", "check_run", "compile_book", "execute", "run_notebook",
           "stale_reason", "sweep"]
