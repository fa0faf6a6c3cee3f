"""Pages computed on another machine (a GPU lent for minutes), carried back in one archive.

On the machine that computes (it needs this repository and the data, nothing else)::

    stitchkit pages H-F2 H-F4 --scale gpu --pack pages.tar.gz

executes each page into a staging folder, then packs the executed notebooks, their results files
and a manifest (scale, commit, each page's notebook source hash, device, wall time) into one
gzipped tar of at most :data:`MAX_ARCHIVE_BYTES`. Back on the machine that holds the book::

    stitchkit import-pages pages.tar.gz

checks the archive before it writes anything (its format, scale, that every page's notebook source
is the one in this checkout, that every results file has the shape the book reads (``catalogue.check_results``: claims with known verdicts), that no member
leaves its folder) and places the pages into ``book/<part>/``. A page of another scale that was
there is kept beside it as ``<ID>.<scale>.results.json``: the scorecard then lists the verdicts of
every scale side by side, and the book shows the page of the highest scale (``paper`` > ``gpu`` >
``demo`` > ``smoke``); a page of a lower scale than the one shown is kept beside it the same way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..base import figure_files, paths
from ..base.fileio import atomic_write_bytes, atomic_write_json
from ..base.provenance import git_state
from ..registry.scales import check_figure_scale, check_scale
from . import catalogue, execution, notebooks
from .catalogue import check_results

FORMAT = 2  # 2: the manifest binds every member by its SHA-256
MAX_ARCHIVE_BYTES = 16 * 2**20  # what one file back from a lent machine may weigh
RANK = execution.SCALE_RANK  # the book shows the page of the highest scale


class ArchiveError(ValueError):
    """An archive that cannot be imported (the message says why, naming the page or member)."""


def pack_pages(ids: Iterable[str], scale: str, archive: Path, *, progress: bool = True,
               budget: float | None = None, plan: list[dict] | None = None,
               prefetched: bool = False, workers: int = 1) -> dict[str, Any]:
    """Execute each page of ``ids`` at ``scale`` and pack them into ``archive``; returns the
    manifest. Every ID and the scale are checked before the first page runs. A page that fails
    stops the packing (its partial notebook is kept beside the archive as ``<ID>.failed.ipynb``);
    pages finished before it are packed first, so a later import still gets them. With
    ``budget`` (seconds), a page is started only while its estimate (:func:`stitchkit.book.batch.estimate`)
    fits the time left; the ones it skips are listed in the manifest (``skipped``), as is
    ``plan`` (the batch's decisions, :func:`stitchkit.book.batch.plan`). ``prefetched``: the pages'
    networks were trained ahead (:func:`run_lanes`), so their estimates are smaller;
    ``workers``: their stitch grids run on a local Dask cluster of that many processes."""
    import time

    from ..base.hardware import device_name
    from .batch import estimate

    ids = list(dict.fromkeys(ids))
    if not ids:
        raise ValueError("name at least one page to pack (e.g. H-F2)")
    check_scale(scale)
    infos = [notebooks.get_notebook(i) for i in ids]
    for info in infos:
        check_figure_scale(info.id, scale)
    archive = Path(archive)
    if archive.is_dir():
        raise ValueError(f"--pack {archive} is a folder: name the archive file to write (e.g. {archive}/pages.tar.gz)")
    try:  # the destination must take the archive before any page runs
        archive.parent.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=archive.parent).close()
    except OSError as exc:
        raise ValueError(f"--pack {archive}: cannot write there ({exc.strerror or exc})") from None
    manifest: dict[str, Any] = {"format": FORMAT, "scale": scale, **git_state(), "device": device_name(),
                                **({"dask_workers": workers} if workers > 1 else {}),
                                "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                                "pages": [], "skipped": [], **({"budget_seconds": budget} if budget is not None else {}),
                                **({"plan": plan} if plan is not None else {})}
    from .batch import matmul_peak

    manifest["peak_flops_per_second"] = matmul_peak()  # on a GPU: the bf16 rate a page's share is of; else None
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stitchkit-pages-") as tmp:
        staging = Path(tmp)
        try:
            for info in infos:
                est = estimate(info.id, scale, prefetched=prefetched, workers=workers)
                if budget is not None:
                    left = budget - (time.monotonic() - start)
                    if est is None or est > left:
                        why = "no estimate" if est is None else f"estimate {est:.0f} s > {left:.0f} s left"
                        manifest["skipped"].append({"id": info.id, "why": why})
                        continue
                out = staging / info.part / f"{info.id}.ipynb"
                try:
                    results = execution.execute(info, out, scale, progress=progress)
                except BaseException:
                    failed = out.with_name(f"{info.id}.failed.ipynb")
                    if failed.exists():
                        os.replace(failed, archive.with_name(failed.name))
                    raise
                manifest["pages"].append({"id": info.id, "part": info.part, "source": results.get("source"),
                                          "source_sha256": results["source_sha256"],
                                          "wall_seconds": results["provenance"].get("wall_seconds"),
                                          "estimate_seconds": est, "device": results["provenance"].get("device"),
                                          "torch": (results["provenance"].get("packages") or {}).get("torch"),
                                          # seconds spent computing new cache entries, and those the cache
                                          # would have taken (networks another lane or page trained first)
                                          "new_seconds": (results["provenance"].get("cache") or {}).get("new_seconds"),
                                          "cached_seconds": (results["provenance"].get("cache") or {}).get(
                                              "cached_seconds"),
                                          **training_speed(results["provenance"].get("networks") or [],
                                                           manifest.get("peak_flops_per_second")),
                                          "claims": len(results.get("claims", [])),
                                          # the page's figure files (stitchkit.base.figure_files), packed beside it
                                          "figures": sorted(f for files in (results.get("figures") or {}).values()
                                                            for f in files)})
                # the archive after every page: a batch cut by its call's limit still returns the pages it finished
                _write_archive(archive, staging, manifest)
        finally:
            if manifest["pages"]:
                _write_archive(archive, staging, manifest)
    return manifest


def training_speed(networks: Iterable[Mapping[str, Any]], peak: float | None = None) -> dict[str, Any]:
    """The training throughput of a page's networks, as the batch's log reports it per page: images
    per second over every network with a timed training (the networks' images over their seconds;
    each network keeps the numbers of the run that trained it, so on a bare GPU machine they are
    this batch's) and how many networks that is; and, over those whose training step's FLOPs were
    counted (``train_flops_per_image``), the FLOP rate and its share of ``peak`` (FLOP/s, the
    batch's measured bf16 matmul rate: :func:`stitchkit.book.batch.matmul_peak`)."""
    networks = list(networks)
    timed = [(n["images_per_second"] * n["train_seconds"], n["train_seconds"]) for n in networks
             if n.get("images_per_second") and n.get("train_seconds")]
    seconds = sum(t for _, t in timed)
    counted = [(n["images_per_second"] * n["train_seconds"] * n["train_flops_per_image"], n["train_seconds"])
               for n in networks if n.get("images_per_second") and n.get("train_seconds") and n.get("train_flops_per_image")]
    rate = sum(f for f, _ in counted) / sum(t for _, t in counted) if counted else None
    return {"train_images_per_second": round(sum(i for i, _ in timed) / seconds, 1) if seconds else None,
            "train_seconds": round(seconds, 2), "networks_timed": len(timed),
            "train_tflops_per_second": None if rate is None else round(rate / 1e12, 2),
            "share_of_peak": None if rate is None or not peak else round(rate / peak, 4)}


_FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


def page_members(page: Mapping[str, Any]) -> list[str]:
    """The archive members of one manifest page: its notebook, its results and its figure files
    (``<part>/<ID>.figures/<name>``; a name that could leave that folder is refused)."""
    base = f"{page['part']}/{page['id']}"
    for name in page.get("figures") or []:
        if not isinstance(name, str) or not _FILE_NAME.fullmatch(name):
            raise ArchiveError(f"{page['id']}: figure file name {name!r} is not a plain file name")
    return [f"{base}.ipynb", f"{base}.results.json", *(f"{base}.figures/{n}" for n in page.get("figures") or [])]


def _write_archive(archive: Path, staging: Path, manifest: dict[str, Any]) -> None:
    manifest["members"] = {name: hashlib.sha256((staging / name).read_bytes()).hexdigest()
                           for page in manifest["pages"] for name in page_members(page)}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        blob = json.dumps(manifest, indent=1).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
        for page in manifest["pages"]:
            for name in page_members(page):
                tar.add(staging / name, arcname=name)
    data = buf.getvalue()
    if len(data) > MAX_ARCHIVE_BYTES:
        raise ArchiveError(f"{archive}: the packed pages weigh {len(data) / 2**20:.1f} MiB, over the "
                           f"{MAX_ARCHIVE_BYTES / 2**20:.0f} MiB a file back from a lent machine may; pack fewer pages")
    atomic_write_bytes(archive, data)


def merge_archives(parts: Iterable[Path], archive: Path, **fields: Any) -> dict[str, Any]:
    """One archive from the archives ``parts`` of one batch (its lanes: the same scale and commit),
    their pages and skipped pages together, and ``fields`` (the batch's own plan and budget) in
    its manifest; returns the merged manifest."""
    merged: dict[str, Any] | None = None
    files: dict[str, bytes] = {}
    for part in parts:
        manifest, members = read_archive(part)
        if merged is None:
            merged = {**manifest, "pages": [], "skipped": [], "lanes": []}
        for key in ("scale", "commit"):
            if manifest.get(key) != merged.get(key):
                raise ArchiveError(f"{part}: {key} {manifest.get(key)!r} differs from the other lanes' "
                                   f"{merged.get(key)!r}")
        merged["lanes"].append({"archive": Path(part).name, "pages": [p["id"] for p in manifest["pages"]]})
        merged["pages"] += manifest["pages"]
        merged["skipped"] += manifest.get("skipped", [])
        files.update(members)
    if merged is None:
        raise ValueError("merge_archives needs at least one archive")
    merged.update(fields)
    with tempfile.TemporaryDirectory(prefix="stitchkit-merge-") as tmp:
        staging = Path(tmp)
        for name, data in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_bytes(data)
        _write_archive(Path(archive), staging, merged)
    return merged


def read_archive(archive: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and the members (name -> bytes) of ``archive``, checked for shape: a readable
    gzipped tar whose members are plain files named ``<part>/<ID>.ipynb`` or
    ``<part>/<ID>.results.json`` for the manifest's pages, and ``manifest.json``."""
    archive = Path(archive)
    if not archive.is_file():
        raise ArchiveError(f"no archive at {archive}")
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = {}
            for m in tar.getmembers():
                if not m.isfile():
                    raise ArchiveError(f"{archive}: member {m.name!r} is not a plain file")
                if m.name in members:
                    raise ArchiveError(f"{archive}: member {m.name!r} appears twice")
                members[m.name] = tar.extractfile(m).read()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"{archive}: not a readable .tar.gz ({exc})") from None
    if "manifest.json" not in members:
        raise ArchiveError(f"{archive}: no manifest.json (not made by `stitchkit pages --pack`)")
    try:
        manifest = json.loads(members.pop("manifest.json"))
    except json.JSONDecodeError as exc:
        raise ArchiveError(f"{archive}: manifest.json is not valid JSON ({exc})") from None
    if manifest.get("format") != FORMAT:
        raise ArchiveError(f"{archive}: archive format {manifest.get('format')!r}; this checkout reads {FORMAT}")
    try:
        check_scale(manifest.get("scale"))
    except ValueError as exc:
        raise ArchiveError(f"{archive}: {exc}") from None
    try:
        expected = {name for p in manifest.get("pages", []) for name in page_members(p)}
    except ArchiveError as exc:
        raise ArchiveError(f"{archive}: {exc}") from None
    stray, missing = sorted(set(members) - expected), sorted(expected - set(members))
    if stray or missing:
        raise ArchiveError(f"{archive}: members {stray} are not the manifest's pages" if stray
                           else f"{archive}: the manifest's {missing} are missing")
    bound = manifest.get("members") or {}
    for name, data in members.items():
        if bound.get(name) != hashlib.sha256(data).hexdigest():
            raise ArchiveError(f"{archive}: member {name!r} does not match the SHA-256 its manifest binds it to")
    return manifest, members


def import_pages(archive: Path, book_dir: Path = paths.BOOK_DIR) -> list[str]:
    """Check ``archive`` whole, then place its pages into ``book_dir``; returns one line per page
    saying what was done. Nothing is written unless every page passes."""
    manifest, members = read_archive(archive)
    scale = manifest["scale"]
    plans = []
    for page in manifest["pages"]:
        fid, part = page["id"], page["part"]
        try:
            info = notebooks.get_notebook(fid)
        except KeyError as exc:
            raise ArchiveError(f"{archive}: {exc.args[0]}") from None
        if info.part != part:
            raise ArchiveError(f"{archive}: {fid} belongs to part {info.part!r}, the archive says {part!r}")
        here = catalogue.source_hash(info.source)
        if page.get("source_sha256") != here:
            raise ArchiveError(f"{archive}: {fid} was run from another notebook source than this checkout's "
                               f"({str(page.get('source_sha256'))[:12]} there, {here[:12]} here): re-run it from "
                               "this commit")
        try:
            results = json.loads(members[f"{part}/{fid}.results.json"])
        except json.JSONDecodeError as exc:
            raise ArchiveError(f"{archive}: {fid}.results.json is not valid JSON ({exc})") from None
        if results.get("id") != fid or results.get("scale") != scale or results.get("source_sha256") != here:
            raise ArchiveError(f"{archive}: {fid}.results.json does not match its manifest entry (id, scale "
                               "or source)")
        try:
            check_results(results, f"{archive}: {fid}.results.json")
        except ValueError as exc:
            raise ArchiveError(str(exc)) from None
        _check_page(archive, fid, part, scale, results, members[f"{part}/{fid}.ipynb"])
        plans.append((info, results))
    done = []
    for info, results in plans:
        done.append(_place(info, results, members, scale, Path(book_dir)))
    return done


def _glued(notebook: bytes) -> dict[str, str]:
    """The values an executed notebook glued (name -> text/plain), as myst-nb reads them."""
    try:
        nb = json.loads(notebook)
    except json.JSONDecodeError:
        return {}
    out = {}
    for cell in nb.get("cells", []):
        for o in cell.get("outputs", []):
            name = ((o.get("metadata") or {}).get("scrapbook") or {}).get("name")
            text = (o.get("data") or {}).get("application/papermill.record/text/plain")
            if name and text is not None:
                out[name] = text
    return out


def _known_commit(commit: str) -> bool | None:
    """Whether ``commit`` is this checkout's HEAD or an ancestor of it (None: no git to ask)."""
    import subprocess

    try:
        done = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=paths.REPO_ROOT,
                              capture_output=True, timeout=10)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.REPO_ROOT, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return done.returncode == 0


def _check_page(archive: Path, fid: str, part: str, scale: str, results: dict, notebook: bytes) -> None:
    """What binds a page's results to a run of this checkout at its scale: a commit of this
    checkout's history, the recorded parameters the scale's preset, a device that
    fits the scale, and the numbers the executed notebook glued equal to the results file's."""
    from dataclasses import asdict, is_dataclass

    from ..registry.figures import presets as presets_of

    where = f"{archive}: {part}/{fid}.results.json"  # finite numbers: check_results, before this
    commit = str((results.get("provenance") or {}).get("commit") or "")
    if _known_commit(commit) is False:
        raise ArchiveError(f"{where}: run at commit {commit[:12] or '(none)'}, which is not in this checkout's "
                           "history: re-run it from this checkout")
    presets = presets_of(fid)
    if presets is not None and scale in presets:
        cfg = presets[scale]
        want = json.loads(json.dumps(asdict(cfg) if is_dataclass(cfg) else dict(cfg)))
        if want != results.get("params"):
            differ = sorted(k for k in set(want) | set(results.get("params") or {})
                            if want.get(k) != (results.get("params") or {}).get(k))
            raise ArchiveError(f"{where}: its parameters are not the {scale!r} preset's (differ in "
                               f"{', '.join(differ[:5])})")
    device = str((results.get("provenance") or {}).get("device") or "")
    if scale in ("gpu", "paper") and (not device or device.lower().startswith("cpu")):
        raise ArchiveError(f"{where}: a {scale!r} page run on {device or 'no recorded device'}")
    numbers = results.get("numbers") or {}
    for name, text in _glued(notebook).items():
        value = numbers.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and text != repr(value):
            raise ArchiveError(f"{archive}: {part}/{fid}.ipynb glued {name} = {text}, its results file says "
                               f"{value!r} (an edited page)")


def _place(info, results: dict, members: dict[str, bytes], scale: str, book_dir: Path) -> str:
    folder = book_dir / info.part
    folder.mkdir(parents=True, exist_ok=True)
    page, res = folder / f"{info.id}.ipynb", folder / f"{info.id}.results.json"
    nb = members[f"{info.part}/{info.id}.ipynb"]
    prefix = f"{info.part}/{info.id}.figures/"
    figures = {name[len(prefix):]: data for name, data in members.items() if name.startswith(prefix)}
    shown = _scale_of(res)
    if shown is not None and shown != scale and RANK[shown] > RANK[scale]:
        # a higher scale's page stays shown; this one's verdicts go beside it
        atomic_write_json(folder / f"{info.id}.{scale}.results.json", results)
        return f"{info.id}: kept the {shown} page; the {scale} verdicts beside it ({info.id}.{scale}.results.json)"
    note = ""
    if shown is not None and shown != scale:
        os.replace(res, folder / f"{info.id}.{shown}.results.json")
        note = f"; the {shown} verdicts kept beside it ({info.id}.{shown}.results.json)"
    (folder / f"{info.id}.{scale}.results.json").unlink(missing_ok=True)  # now the page itself
    running = figure_files.running_folder(page)
    shutil.rmtree(running, ignore_errors=True)
    for name, data in figures.items():
        atomic_write_bytes(running / name, data)
    figure_files.replace_folder(running, figure_files.figures_folder(page))  # none in the archive: none kept
    atomic_write_bytes(page, nb)
    atomic_write_json(res, results)
    return f"{info.id}: the {scale} page placed in {page.relative_to(book_dir.parent)}{note}"


def _scale_of(res: Path) -> str | None:
    if not res.exists():
        return None
    try:
        return json.loads(res.read_text()).get("scale")
    except json.JSONDecodeError:
        return None


def run_lanes(decisions: list, scale: str, archive: Path, *, budget: float | None, lanes: int,
              require_gpu: bool = False) -> dict:
    """Run the pages ``decisions`` (:class:`stitchkit.book.batch.Decision`) picked in ``lanes``
    concurrent processes (each one ``stitchkit pages <its pages> --pack <archive>.laneK.tar.gz``,
    which packs after every page),
    then merge the lanes' archives into ``archive`` (:func:`stitchkit.book.transfer.merge_archives`).

    Why: on a GPU the papers' small networks are launch-bound (a width-64 ResNet-18 on MNIST
    trains at ~12,000 images/s on an H100, a few per cent of its peak), so pages in concurrent
    processes share the device. Networks and stitches two lanes need are trained once: the cache
    locks each entry, and the second lane reads it. A signal to this process is passed on to every
    lane (each stops its kernel); the lanes' archives hold the pages they finished."""
    import dataclasses
    import subprocess
    import sys
    import time

    from .batch import BatchError, prefetch, wait_all

    archive = Path(archive)
    start = time.monotonic()
    # first the networks the pages will need, spread over the lanes (the pages then find them cached)
    n = prefetch([d.id for d in decisions if d.run], scale, lanes)
    procs, parts = [], []
    for k in range(lanes):
        ids = [d.id for d in decisions if d.run and d.lane == k]
        if not ids:
            continue
        part = archive.with_name(f"{archive.name.split('.')[0]}.lane{k + 1}.tar.gz")
        part.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "stitchkit", "pages", *ids, "--scale", scale, "--pack", str(part)]
        if n:
            cmd.append("--prefetched")
        if budget is not None:
            cmd += ["--budget", f"{budget - (time.monotonic() - start):.0f}"]
        if require_gpu:
            cmd.append("--require-gpu")
        print(f"lane {k + 1}: {' '.join(ids)}", flush=True)
        procs.append(subprocess.Popen(cmd))
        parts.append(part)

    codes = wait_all(procs)
    done = [p for p in parts if p.is_file()]
    fields = {"plan": [dataclasses.asdict(d) for d in decisions], "lane_count": lanes,
              **({"budget_seconds": budget} if budget is not None else {})}
    manifest = merge_archives(done, archive, **fields) if done else {"pages": [], "skipped": []}
    if any(codes):
        failed = [f"lane {k + 1} exited {c}" for k, c in enumerate(codes) if c]
        raise BatchError(f"{'; '.join(failed)} (the pages the lanes finished are in {archive}"
                         + ("" if done else ": none") + ")")
    return manifest
