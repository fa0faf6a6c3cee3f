"""What a notebook run records: parameters, provenance, named numbers and claim verdicts.

``run = Run("B-F2A", scale, params)`` at the top of a notebook; ``run.record(numbers, claims)``
stores named numbers (glued, so prose can quote them with ``{glue:text}`key:.3f```) and claims,
and ``run.save()`` writes the results JSON atomically. The executor sets ``$STITCHKIT_RESULTS``
to the path beside the executed notebook and later adds the wall time.

Verdicts are three-valued and decided by criteria fixed before the run:

- ``reproduced`` / ``not reproduced``: the claim's :class:`Criterion` (built by :func:`at_most`,
  :func:`at_least`, :func:`within`, ... from one threshold, which also writes its text) holds
  or not;
- ``inconclusive at this scale``: a :class:`Control` stated with the claim failed (e.g. the
  receiver stitched into itself, where an exact stitch exists, does not reach ~0 penalty, so
  the stitch recipe is too weak at this scale to judge the claim);
- at ``smoke`` scale nothing is assessed (smoke models carry no evidence either way).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, is_dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from . import paths
from .fileio import atomic_write_json

RESULTS_ENV = "STITCHKIT_RESULTS"


# GPU spot checks and diagnoses (benchmarks/paper_spot.py, benchmarks/spot_*.py) are committed
# here with their provenance; pages show them beside their own run.
SPOT_DIR = paths.REPO_ROOT / "benchmarks" / "spot"


def load_spot_json(stem: str, spot_dir: Path | None = None) -> dict | None:
    """A committed spot-check JSON file (metadata, or a diagnosis on its own), or None."""
    import json

    path = Path(spot_dir or SPOT_DIR) / f"{stem}.json"
    return json.loads(path.read_text()) if path.exists() else None


COMMIT_ENV = "STITCHKIT_COMMIT"  # the commit of a copied checkout that has no .git


def git_state(repo: Path = paths.REPO_ROOT) -> dict[str, Any]:
    """Current commit and whether the work tree differs from it in anything but the book's
    generated pages (``book/``, ``_toc.yml``: the outputs of runs; None outside a checkout)."""
    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=10,
                                  check=True).stdout.strip()
        except Exception:
            return None
    if os.environ.get(COMMIT_ENV):
        # a copy of a checkout (a lent GPU machine): the commit it was copied at, as the command that
        # started the run says. It wins over git there, whose .git may be an older one (seen: the
        # copy's git named the session's first commit, 'dirty', for a tree two commits later);
        # whether the copy was changed since is unknown
        return {"commit": os.environ[COMMIT_ENV].strip(), "dirty": None}
    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)book", ":(exclude)_toc.yml")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("stitchkit", "torch", "numpy", "matplotlib", "papermill"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def provenance(device: str | None = None, seed: int | None = None) -> dict[str, Any]:
    from .hardware import MEASURE_PRECISION, default_device, device_name, resolve_precision

    return {**git_state(), "packages": package_versions(), "device": device or device_name(),
            "precision": resolve_precision("auto", default_device()),  # training's
            "measure_precision": MEASURE_PRECISION,
            "platform": platform.platform(), "seed": seed,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


VERDICTS = ("reproduced", "not reproduced", "inconclusive at this scale", "not assessed at smoke scale")


@dataclass(frozen=True)
class Criterion:
    """A threshold test on a measured value: its text (what is compared with what) and result."""

    text: str
    holds: bool


def _fmt(x: float, unit: str, digits: int) -> str:
    return f"{x:.{digits}f}{(' ' + unit) if unit else ''}"


def at_most(value: float, threshold: float, what: str, *, unit: str = "points", digits: int = 2) -> Criterion:
    """``what`` ≤ threshold."""
    return Criterion(f"{what} ≤ {_fmt(threshold, unit, digits)}", bool(value <= threshold))


def at_least(value: float, threshold: float, what: str, *, unit: str = "points", digits: int = 2) -> Criterion:
    """``what`` ≥ threshold."""
    return Criterion(f"{what} ≥ {_fmt(threshold, unit, digits)}", bool(value >= threshold))


def more_than(value: float, threshold: float, what: str, *, unit: str = "points", digits: int = 2) -> Criterion:
    """``what`` > threshold (the negation of :func:`at_most`)."""
    return Criterion(f"{what} > {_fmt(threshold, unit, digits)}", bool(value > threshold))


def within(value: float, paper: float, tol: float, what: str, *, unit: str = "points", digits: int = 2) -> Criterion:
    """|``what`` − paper| ≤ tol."""
    return Criterion(f"|{what} − paper's {_fmt(paper, unit, digits)}| ≤ {_fmt(tol, unit, digits)}",
                     bool(abs(value - paper) <= tol * (1 + 1e-9)))  # 0.97 vs 0.99 ± 0.02 is within


@dataclass(frozen=True)
class Control:
    """A check stated before the run whose failure makes a claim inconclusive at this scale."""

    text: str  # what the control is, in words
    criterion: str  # its pass condition
    value: str  # what we measured, formatted
    passed: bool

    @classmethod
    def of(cls, text: str, criterion: Criterion, value: str) -> "Control":
        return cls(text, criterion.text, value, criterion.holds)


@dataclass
class Claim:
    key: str
    text: str  # the paper's claim, in words
    criterion: str  # how our verdict is decided, in words
    paper: str  # the paper's number or statement
    ours: str  # our measured value, formatted
    holds: bool  # computed from the criterion
    scale: str  # the run's scale: smoke runs carry no evidence either way
    controls: tuple[Control, ...] = ()  # a failed control makes the verdict inconclusive
    n: int = 1  # independent seeds behind ``ours``

    @property
    def failed_controls(self) -> list[Control]:
        return [c for c in self.controls if not c.passed]

    @property
    def verdict(self) -> str:
        if self.scale == "smoke":
            return "not assessed at smoke scale"
        if self.failed_controls:
            return "inconclusive at this scale"
        return "reproduced" if self.holds else "not reproduced"


class Run:
    """Collects one notebook run's numbers and claims and writes them as JSON."""

    def __init__(self, figure_id: str, scale: str, params: Any, seed: int | None = None, *,
                 role: str | None = None) -> None:
        """``role``: for a page that makes no claim, what it does instead (its result box says it)."""
        from .scales import check_scale

        self.figure_id, self.scale, self.role = figure_id, check_scale(scale), role
        self.params = asdict(params) if is_dataclass(params) else dict(params)
        self.numbers: dict[str, Any] = {}
        self.claims: list[Claim] = []
        self.provenance = provenance(seed=seed)
        self._t0 = time.perf_counter()

    def number(self, key: str, value: Any, *, glue: bool = True) -> Any:
        """Record ``value`` under ``key`` (and glue it for the page's prose)."""
        if hasattr(value, "item"):
            value = value.item()
        self.numbers[key] = value
        if glue:
            _glue(key, value)
        return value

    def claim(self, key: str, text: str, *, criterion: Criterion, paper: str, ours: str,
              controls: tuple[Control, ...] | list[Control] = (), n: int = 1) -> Claim:
        """Record a claim whose verdict follows from ``criterion`` and ``controls``."""
        if any(c.key == key for c in self.claims):
            raise ValueError(f"claim {key!r} recorded twice")
        c = Claim(key, text, criterion.text, paper, ours, criterion.holds, self.scale, tuple(controls), n)
        self.claims.append(c)
        _glue(f"verdict_{key}", c.verdict)
        return c

    def figure(self, key: str, fig: Any) -> None:
        """Glue a matplotlib figure under ``key`` for a captioned ``{glue:figure}`` in the page's
        markdown, and close it (so it is not also shown bare)."""
        import matplotlib.pyplot as plt

        fig.set_dpi(FIGURE_DPI)  # the page scales it to its width; the link opens it at full size
        _glue(key, fig)
        plt.close(fig)

    def record(self, numbers: dict[str, Any], claims: list[dict[str, Any]]) -> None:
        """Record every named number and every claim (keyword dicts for :meth:`claim`)."""
        for key, value in numbers.items():
            self.number(key, value)
        for c in claims:
            self.claim(**c)

    def claims_table(self):
        """Claims as a styled table (claim, criterion, paper, ours, controls, verdict)."""
        import pandas as pd

        frame = pd.DataFrame([{"claim": c.text, "criterion": c.criterion, "paper": c.paper, "ours": c.ours,
                               "controls": "; ".join(f"{k.text}: {k.value} ({'passed' if k.passed else 'FAILED'})"
                                                     for k in c.controls) or "-",
                               "verdict": c.verdict} for c in self.claims])
        return (frame.style.hide(axis="index").format(escape="html")
                .set_properties(**{"text-align": "left", "white-space": "normal"}))

    def to_dict(self) -> dict[str, Any]:
        from . import store  # torch, only when a run saves

        return {"id": self.figure_id, "scale": self.scale, "params": self.params,
                "provenance": {**self.provenance, "compute_seconds": round(time.perf_counter() - self._t0, 1),
                               "cache": store.ledger_summary()},
                "numbers": self.numbers, **({"role": self.role} if self.role else {}),
                "claims": [{**asdict(c), "verdict": c.verdict} for c in self.claims]}

    def save(self, path: str | os.PathLike | None = None) -> Path:
        default = paths.RUNS_DIR / "interactive" / f"{self.figure_id}.results.json"
        path = Path(path or os.environ.get(RESULTS_ENV) or default)
        atomic_write_json(path, self.to_dict())
        return path


FIGURE_DPI = 150


GLUE_PREFIX = "application/papermill.record/"  # myst-nb's mime prefix of a glued, undisplayed value


def _glue(key: str, value: Any) -> None:
    """``myst_nb.glue(key, value, display=False)`` inside a kernel; where myst-nb is not installed
    (a GPU machine that runs pages for the book built elsewhere) the same output, written here:
    the value's display data under myst-nb's mime prefix, named in the ``scrapbook`` metadata."""
    if "ipykernel" not in sys.modules:  # outside a notebook: numbers still go to the JSON
        return
    try:
        from myst_nb import glue
    except ImportError:
        from IPython.core.formatters import format_display_data
        from IPython.display import display

        bundle, metadata = format_display_data(value)
        metadata["scrapbook"] = {"name": key, "mime_prefix": GLUE_PREFIX}
        display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
        return
    glue(key, value, display=False)
