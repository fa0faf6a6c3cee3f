"""The catalogue of the four papers' figures and the book's results files, read back.

Every figure and table the papers (:mod:`stitchkit.registry.papers`) hold (:data:`CATALOGUE`,
:data:`TITLES`, in the catalogue's order). A page's run is a :class:`Page` (its results file and document);
:func:`load_pages` reads every results file of the book, checked by :func:`check_results`, and
:func:`empty_cache_seconds` estimates what the pages would take from an empty cache.

The catalogue (IDs, titles) is derived from the figure registry (:mod:`stitchkit.registry.figures`),
written out because the catalogue document lives outside the repository.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..base import paths
from ..registry.figures import FIGURES, SCALES
from ..registry.papers import PAPER_BY_PART, Paper, paper_of
from ..registry.staleness import file_hash

# The same tuple as stitchkit.verdicts.results.VERDICTS (a test checks it); written out so that this module
# does not import it (pandas, torch).
VERDICTS = ("reproduced", "not reproduced", "inconclusive at this scale", "not assessed at smoke scale")


# Every figure and table of the four papers, in the catalogue's order: (ID, what it shows); then the
# pages of the part beyond them (X-...). Derived from the figure registry (stitchkit.registry.figures).
CATALOGUE: tuple[tuple[str, str], ...] = tuple((f.id, f.title) for f in FIGURES)
TITLES = dict(CATALOGUE)
_ORDER = {fid: i for i, (fid, _) in enumerate(CATALOGUE)}


def sort_key(figure_id: str) -> tuple[int, str]:
    return (_ORDER.get(figure_id, len(_ORDER)), figure_id)


def visible(path: Path, root: Path) -> bool:
    return not any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def minutes(seconds: float | None) -> str:
    """A duration as the book writes it: ``42 s``, ``3.5 min`` (``unknown`` for None)."""
    if seconds is None or seconds == "":
        return "unknown"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def source_hash(path: Path) -> str:
    """SHA-256 of a notebook source (:func:`stitchkit.registry.staleness.file_hash`, the hash a page's library modules get)."""
    return file_hash(Path(path))


# --------------------------------------------------------------------------------------------
# Reading the book folder


@dataclass(frozen=True)
class Page:
    """One figure's executed run: its results and, when the page file exists, its document."""

    id: str
    part: str  # folder under the book dir
    results: Mapping[str, Any]
    doc: str | None  # document path relative to the book dir without suffix ("bansal/B-F2A"), or None
    # False for another scale's verdicts kept beside the page shown (``<ID>.<scale>.results.json``,
    # see stitchkit.book.transfer): on the scorecard, linked to that page, but not a page of its own
    shown: bool = True

    @property
    def paper(self) -> Paper | None:
        return PAPER_BY_PART.get(self.part) or paper_of(self.id)

    @property
    def wall_seconds(self) -> float | None:
        return self.results.get("provenance", {}).get("wall_seconds")

    def behind(self, notebooks_dir: Path | None = None) -> str | None:
        """Why this run is behind the code (its notebook or a library module it imported changed
        since: :func:`stitchkit.registry.staleness.behind_reason`; ``make rerun`` re-runs it), or None."""
        from ..registry.staleness import behind_reason

        return behind_reason(self.results, Path(notebooks_dir or paths.NOTEBOOKS_DIR) / f"{self.id}.py")


def of_current_notebook(page: Page, notebooks_dir: Path | None = None) -> bool:
    """Whether ``page`` was run from its figure's notebook as it is now (its rules, criteria and
    controls are the current ones; a library module may still have changed since)."""
    source = Path(notebooks_dir or paths.NOTEBOOKS_DIR) / f"{page.id}.py"
    return source.exists() and page.results.get("source_sha256") == source_hash(source)


def counted_runs(pages: list[Page], notebooks_dir: Path | None = None) -> dict[str, tuple[Page, dict[int, str]]]:
    """The one run of each figure the scorecard counts, and why each of its other runs is not:
    figure ID -> (the counted page, {id(page): reason} for the others). A figure's runs are the page
    shown and the verdicts of other scales kept beside it; the counted one is the run of the
    highest scale among those made from the notebook as it is now (so no verdict judged under
    rules since retired is counted while a current run exists), else the highest scale. A claim is
    counted once however many scales it was run at."""
    rank = {sc: i for i, sc in enumerate(SCALES)}
    by_id: dict[str, list[Page]] = {}
    for page in pages:
        by_id.setdefault(page.id, []).append(page)
    out = {}
    for fid, runs in by_id.items():
        current = {id(p): of_current_notebook(p, notebooks_dir) for p in runs}
        best = max(runs, key=lambda p: (current[id(p)], rank.get(p.results.get("scale"), -1), p.shown))
        reasons = {}
        for p in runs:
            if p is best:
                continue
            scale, date = p.results.get("scale", "?"), str(p.results.get("provenance", {}).get("date") or "?")[:10]
            chosen = best.results.get("scale", "?")
            reasons[id(p)] = (f"the {scale} run of {date} was made from an earlier version of its notebook (rules "
                              f"since retired); the current {chosen} run is counted" if current[id(best)]
                              and not current[id(p)] else f"the {chosen} run of this figure is counted (one run a "
                              "figure)")
        out[fid] = (best, reasons)
    return out


def empty_cache_seconds(pages: list[Page]) -> tuple[float, int]:
    """An estimate of what ``pages`` would take run one after another from an empty cache, and
    how many of them lack the record it needs. A page's results file keeps the compute seconds of
    every cache entry (model, stitch) the run used (``provenance.cache``): the estimate is each
    page's run time less the entries it computed itself, plus every entry used by any of the pages,
    counted once. A page without the record, or that used cache entries recording no compute time
    (``unrecorded``), counts toward ``missing``: the estimate is then a lower bound."""
    total, missing, entries = 0.0, 0, {}
    for page in pages:
        prov = page.results.get("provenance", {})
        wall = prov.get("wall_seconds") or 0.0
        cache = prov.get("cache")
        if not isinstance(cache, dict):
            total, missing = total + wall, missing + 1
            continue
        missing += bool(cache.get("unrecorded"))
        total += max(wall - cache.get("new_seconds", 0.0), 0.0)
        for key, seconds in cache.get("entries", {}).items():
            entries[key] = max(entries.get(key, 0.0), seconds)
    return total + sum(entries.values()), missing


def ran_from_empty_cache(pages: list[Page]) -> bool:
    """Whether ``pages`` were run from an empty cache, one after another: each model and stitch any
    of them used was computed by one of these runs (the pages' computed seconds add up to the
    seconds of every entry they used, counted once), so their wall times are a measurement of the
    empty-cache cost, not an estimate. False when a page lacks the record or nothing was computed."""
    caches = [p.results.get("provenance", {}).get("cache") for p in pages]
    if not pages or not all(isinstance(c, dict) and not c.get("unrecorded") for c in caches):
        return False
    entries: dict[str, float] = {}
    for cache in caches:
        for key, seconds in cache.get("entries", {}).items():
            entries[key] = max(entries.get(key, 0.0), seconds)
    computed = sum(c.get("new_seconds", 0.0) for c in caches)
    used = sum(entries.values())
    return used > 0 and computed >= used - max(1.0, 0.001 * used)  # the ledger rounds each entry


# Each page's wall time at smoke from an empty cache, measured by benchmarks/smoke_times.py:
# {ID: {"seconds", "threads", "device", "commit", "source_sha256", "date"}}.
SMOKE_TIMES = paths.REPO_ROOT / "benchmarks" / "smoke_times.json"


def smoke_times(path: Path = SMOKE_TIMES) -> dict[str, dict[str, Any]]:
    """The measured smoke times (:data:`SMOKE_TIMES`); empty where none were measured or the file
    is unreadable (a rerun box then says the page was not timed)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_pages(book_dir: Path = paths.BOOK_DIR, problems: dict[str, str] | None = None) -> list[Page]:
    """Every ``<ID>.results.json`` under ``book_dir`` (hidden and ``_`` folders skipped), in
    catalogue order; unreadable files raise naming the file, or with ``problems`` (a dict) are
    left out and recorded there (figure ID, or the file's name where it names none -> the reason),
    so that one bad file cannot stop the book."""
    book_dir = Path(book_dir)
    pages = []
    for res in sorted(book_dir.glob("**/*.results.json")):
        if not visible(res, book_dir):
            continue
        try:
            try:
                results = json.loads(res.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ValueError(f"{res}: not valid JSON ({e})") from e
            check_results(results, res)
        except (ValueError, OSError) as e:
            if problems is None:
                raise
            problems[figure_id_of(res)] = str(e)
            continue
        stem = res.name[: -len(".results.json")]
        figure_id = results["id"]  # check_results: every results file names its figure
        beside = stem != figure_id and stem.startswith(figure_id + ".")  # <ID>.<scale>.results.json
        base = figure_id if beside else stem
        page_file = next((res.with_name(base + ext) for ext in (".ipynb", ".md") if res.with_name(base + ext).exists()),
                         None)
        doc = page_file.relative_to(book_dir).with_suffix("").as_posix() if page_file else None
        part = res.parent.relative_to(book_dir).parts[0] if res.parent != book_dir else ""
        pages.append(Page(figure_id, part, results, doc, shown=not beside))
    # within a figure, the page shown first, then the verdicts kept beside it, highest scale first
    rank = {s: i for i, s in enumerate(SCALES)}
    return sorted(pages, key=lambda p: (sort_key(p.id), not p.shown, -rank.get(p.results.get("scale"), -1)))


def _non_finite(obj: Any, path: str = "") -> str | None:
    """The path (``numbers.x``, ``claims[0].low``) of the first non-finite number in a parsed JSON
    value, or None."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return path or "(top)"
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        found = _non_finite(v, f"{path}[{k}]" if isinstance(k, int) else (f"{path}.{k}" if path else str(k)))
        if found:
            return found
    return None


def _at(obj: Any, path: str) -> Any:
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        obj = obj[int(part[1:-1])] if part.startswith("[") else obj[part]
    return obj


def check_results(results: Any, where: Path | str) -> None:
    """Raise ValueError naming ``where`` unless ``results`` has the shape a page's results file
    must have (an object with ``id``, ``scale`` and a list of ``claims``, each claim with a
    ``text`` and a known ``verdict``), so that a damaged file is an error, never a silent change of
    the scorecard's counts."""
    if not isinstance(results, dict):
        raise ValueError(f"{where}: a results file must hold a JSON object, not {type(results).__name__}")
    missing = [k for k in ("id", "scale", "claims") if k not in results]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}; re-run the page (stitchkit book) to rewrite it")
    if results["scale"] not in SCALES:
        raise ValueError(f"{where}: unknown scale {results['scale']!r}; valid: {', '.join(SCALES)}")
    if not isinstance(results["claims"], list):
        raise ValueError(f"{where}: 'claims' must be a list")
    bad = _non_finite(results)
    if bad:
        raise ValueError(f"{where}: {bad} is not a finite number ({_at(results, bad)!r}); re-run the page")
    _check_provenance(results.get("provenance", {}), where)
    for n, c in enumerate(results["claims"]):
        name = c.get("key", n) if isinstance(c, dict) else n
        if not isinstance(c, dict) or not c.get("text"):
            raise ValueError(f"{where}: claim {name!r} is not an object with a text")
        if c.get("verdict") not in VERDICTS:
            raise ValueError(f"{where}: claim {name!r} has verdict {c.get('verdict')!r}; valid: {', '.join(VERDICTS)}")
        if "holds" in c:  # a claim that records its criterion's result: the verdict must follow from it
            from ..verdicts.results import check_verdict

            check_verdict(c, results["scale"], str(where))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_provenance(prov: Any, where: Path | str) -> None:
    """The provenance fields the book computes with (wall time, the cache ledger) have the types
    it computes with: a damaged field is an error naming it, never a TypeError deep in a listing."""
    if not isinstance(prov, dict):
        raise ValueError(f"{where}: 'provenance' must be an object, not {type(prov).__name__}")
    if prov.get("wall_seconds") is not None and not _number(prov["wall_seconds"]):
        raise ValueError(f"{where}: provenance.wall_seconds must be a number, not {prov['wall_seconds']!r}")
    cache = prov.get("cache")
    if cache is None:
        return
    if not isinstance(cache, dict):
        raise ValueError(f"{where}: provenance.cache must be an object, not {type(cache).__name__}")
    for field in ("new_seconds", "cached_seconds"):
        if field in cache and not _number(cache[field]):
            raise ValueError(f"{where}: provenance.cache.{field} must be a number, not {cache[field]!r}")
    entries = cache.get("entries", {})
    if not isinstance(entries, dict) or not all(_number(v) for v in entries.values()):
        raise ValueError(f"{where}: provenance.cache.entries must map cache keys to seconds")


def figure_id_of(results_file: Path) -> str:
    """The figure a results file is of, from its name: ``S-4.2.results.json`` is S-4.2 (an ID may
    hold a dot), ``H-F2.demo.results.json`` H-F2 (a scale's verdicts kept beside its page)."""
    stem = results_file.name[: -len(".results.json")]
    head, dot, tail = stem.rpartition(".")
    return head if dot and tail in SCALES else stem


def figure_docs(book_dir: Path, part: str) -> list[str]:
    """The figure pages of a part (``<ID>.ipynb`` or ``<ID>.md`` but not ``index``, nor the partial
    notebook a failed or stopped run leaves, ``<ID>.failed.ipynb``), catalogue order."""
    folder = Path(book_dir) / part
    stems = {f.stem for f in folder.glob("*") if f.suffix in (".ipynb", ".md") and f.stem != "index"
             and not f.name.startswith((".", "_")) and not f.name.endswith(".failed.ipynb")}
    return sorted(stems, key=sort_key)


__all__ = ["CATALOGUE", "Page", "TITLES", "VERDICTS", "check_results", "counted_runs", "empty_cache_seconds",
           "figure_docs", "figure_id_of", "of_current_notebook",
           "load_pages", "ran_from_empty_cache", "source_hash"]
