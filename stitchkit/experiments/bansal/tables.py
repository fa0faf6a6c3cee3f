"""Bansal et al. 2021, Table 1, regenerated from the measured numbers of the other pages.

The paper's Table 1 compares CKA with stitching on three questions: networks from different
initialisations, supervised vs self-supervised networks, and "more is better" (more data,
training time, width). Each of our cells is built from the ``*.results.json`` of the page that
measured it (never typed by hand), with the page's scale, the verdicts of its claims and, where
the page recorded one, the 95% interval of the number in brackets; a page that has not run yet
leaves its cell saying so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...base import paths
from ...registry.scales import param

COLUMNS = ("Different initialisation", "Self-supervision", "More data / time / width")
PAPER = {
    "CKA": ("Varies (can be 0)", "Varies (0.35-0.9)", "Far (can be 0 for data, 0.7 for width)"),
    "Stitching": ("Close (up to 3% error)", "Close (up to 5% error)", "Better"),
}
SOURCES = ("B-F2A", "B-F5", "B-F6", "B-F2C", "B-F3B", "B-F3C", "B-F7")


@dataclass(frozen=True)
class TableConfig:
    """B-T1 computes nothing: it reads the other Bansal pages' results files."""

    results_dir: str | None = param(None, "folder with the pages' <ID>.results.json; None: the book's Bansal part",
                                    existing_folder=True)


PRESETS_T1 = {scale: TableConfig() for scale in ("smoke", "demo", "paper")}
# One GPU: the same reading: each cell from its page's results as the book shows them (a page's gpu run once it
# is imported, the highest scale shown), each cell naming its scale. It computes nothing on the GPU.
PRESETS_T1["gpu"] = TableConfig()


def source_files(cfg: TableConfig) -> dict[str, Path]:
    """Where each source page's results file is (figure ID -> path)."""
    folder = Path(cfg.results_dir) if cfg.results_dir else paths.BOOK_DIR / "bansal"
    return {fid: folder / f"{fid}.results.json" for fid in SOURCES}


def load(cfg: TableConfig) -> dict[str, dict | None]:
    """Each source page's results (None where the page has not run)."""
    return {fid: json.loads(path.read_text()) if path.exists() else None for fid, path in source_files(cfg).items()}


def _verdicts(res: dict, keys: tuple[str, ...]) -> str:
    by = {c["key"]: c["verdict"] for c in res.get("claims", [])}
    return ", ".join(f"{by[k]}" for k in keys if k in by)


def _src(fid: str, res: dict) -> str:
    return f"{fid}, {res['scale']}"


def _cut_values(numbers: dict, prefix: str) -> list[float]:
    """Values of ``<prefix><cut>`` keys (per-cut numbers; summary keys such as ``_mean`` excluded)."""
    return [v for k, v in numbers.items() if k.startswith(prefix) and k[len(prefix):] not in ("mean", "min", "max",
                                                                                              "first", "late")
            and not k.endswith(("_low", "_high"))]


def _num(numbers: dict, key: str, digits: int = 1) -> str:
    """A page's number with its 95% interval where the page recorded one (``key_low``, ``key_high``)."""
    v = f"{numbers[key]:.{digits}f}"
    if f"{key}_low" in numbers and f"{key}_high" in numbers:
        v += f" [{numbers[f'{key}_low']:.{digits}f}, {numbers[f'{key}_high']:.{digits}f}]"
    return v


def ours(results: dict[str, dict | None]) -> dict[str, tuple[str, str, str]]:
    """Our CKA and stitching cells, each a sentence with the numbers and their source page."""
    missing = "no page yet ({})"
    cka, stitch = [], []
    f5, f2a, f6, f7 = (results.get(k) for k in ("B-F5", "B-F2A", "B-F6", "B-F7"))
    # different initialisation
    if f5:
        v = _cut_values(f5["numbers"], "trained_cka_")
        cka.append(f"{min(v):.2f}-{max(v):.2f} over layers ({_src('B-F5', f5)})")
    else:
        cka.append(missing.format("B-F5"))
    if f2a:
        n = f2a["numbers"]
        key = "trained_max_penalty_beyond" if "trained_max_penalty_beyond" in n else "trained_max_penalty"
        stitch.append(f"up to {_num(n, key)} points ({_src('B-F2A', f2a)}: {_verdicts(f2a, ('connected',))})")
    else:
        stitch.append(missing.format("B-F2A"))
    # self-supervision
    if f6:
        n = f6["numbers"]
        cka.append(f"{n['cka_min']:.2f}-{n['cka_max']:.2f} over layers ({_src('B-F6', f6)})")
        stitch.append(f"up to {_num(n, 'max_penalty')} points ({_src('B-F6', f6)}: {_verdicts(f6, ('connected',))})")
    else:
        cka.append(missing.format("B-F6"))
        stitch.append(missing.format("B-F6"))
    # more is better
    if f7:
        n = f7["numbers"]
        cka.append(f"lowest {_num(n, 'samples_cka_min', 2)} (data), {_num(n, 'length_cka_min', 2)} (time), "
                   f"{_num(n, 'width_cka_min', 2)} (width) ({_src('B-F7', f7)})")
    else:
        cka.append(missing.format("B-F7"))
    parts = []
    for fid, key, what in (("B-F2C", "improvement", "data"), ("B-F3B", "longer_gain", "time"),
                           ("B-F3C", "wide_into_thin_gain", "width")):
        res = results.get(fid)
        if res and key in res["numbers"]:
            parts.append(f"gain {_num(res['numbers'], key)} points ({what}; {_src(fid, res)}: "
                         f"{_verdicts(res, ('improves', 'wider_improves'))})")
        else:
            parts.append(f"{what}: " + missing.format(fid))
    stitch.append("; ".join(parts))
    return {"CKA": tuple(cka), "Stitching": tuple(stitch)}


def table1(results: dict[str, dict | None]) -> pd.DataFrame:
    """The paper's rows and ours, interleaved: CKA (paper), CKA (ours), Stitching (paper), ..."""
    mine = ours(results)
    rows = {}
    for method in ("CKA", "Stitching"):
        rows[f"{method} (paper)"] = PAPER[method]
        rows[f"{method} (ours)"] = mine[method]
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(COLUMNS))


def sources(results: dict[str, dict | None]) -> pd.DataFrame:
    """Which run each cell comes from: page, scale, date, commit, verdicts."""
    rows = []
    for fid, res in results.items():
        if res is None:
            rows.append({"page": fid, "scale": "-", "date": "-", "commit": "-", "verdicts": "not run yet"})
            continue
        p = res["provenance"]
        verdicts = [c["verdict"] for c in res.get("claims", [])]
        rows.append({"page": fid, "scale": res["scale"], "date": p.get("date", "?")[:10],
                     "commit": (p.get("commit") or "?")[:10],
                     "verdicts": ", ".join(f"{verdicts.count(v)} × {v}" for v in dict.fromkeys(verdicts)) or "-"})
    return pd.DataFrame(rows).set_index("page")


def numbers(results: dict[str, dict | None]) -> dict[str, float]:
    """How many source pages ran, for the page's prose."""
    return {"pages_found": sum(r is not None for r in results.values()), "pages_expected": len(results)}


# --------------------------------------------------------------------------------------------
# B-F2B: ImageNet self-supervised vs supervised, out of reach offline; B-F6 stands in


@dataclass(frozen=True)
class StandInConfig:
    """B-F2B computes nothing: it reports the verdicts of its CIFAR-10 stand-in, B-F6."""

    results_dir: str | None = param(None, "folder with B-F6.results.json; None: the book's Bansal part",
                                    existing_folder=True)


PRESETS_F2B = {scale: StandInConfig() for scale in ("smoke", "demo", "paper")}
# One GPU: the same reading, B-F6's results as the book shows them (its gpu run once that is imported).
PRESETS_F2B["gpu"] = StandInConfig()


def stand_in_file(cfg: StandInConfig) -> Path:
    """Where B-F6's results file is."""
    return (Path(cfg.results_dir) if cfg.results_dir else paths.BOOK_DIR / "bansal") / "B-F6.results.json"


def stand_in(cfg: StandInConfig) -> tuple[dict | None, pd.DataFrame]:
    """B-F6's results (None if it has not run) and its claims as a table."""
    path = stand_in_file(cfg)
    if not path.exists():
        return None, pd.DataFrame({"claim": ["B-F6 has not run yet"]})
    res = json.loads(path.read_text())
    def judged(c: dict) -> str:
        if c.get("low") is None or c.get("high") is None:
            return "-"
        unit = f" {c['unit']}" if c.get("unit") else ""
        return f"{c['value']:.3g} [{c['low']:.3g}, {c['high']:.3g}]{unit}"

    rows = [{"claim": c["text"], "paper": c["paper"], "ours": c["ours"], "judged value (95% interval)": judged(c),
             "verdict": c["verdict"] + (f" ({c['reason']})" if c.get("reason") else "")}
            for c in res.get("claims", [])]
    return res, pd.DataFrame(rows)
