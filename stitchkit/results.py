"""What a notebook run records: parameters, provenance, named numbers and claim verdicts.

``run = Run("B-F2A", scale, params)`` at the top of a notebook; ``run.number(key, value)``
stores a number and glues it (so prose can quote it with ``{glue:text}`key:.3f```);
``run.claim(...)`` records a claim with the paper's value, ours, and a verdict computed from a
stated criterion; ``run.save()`` writes the results JSON atomically. The executor sets
``$STITCHKIT_RESULTS`` to the path beside the executed notebook and later adds the wall time.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from . import paths
from .io import atomic_write_json

RESULTS_ENV = "STITCHKIT_RESULTS"


def git_state(repo: Path = paths.REPO_ROOT) -> dict[str, Any]:
    """Current commit and whether the work tree differs from it (None outside a checkout)."""
    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=10,
                                  check=True).stdout.strip()
        except Exception:
            return None
    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
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
    from .train import device_name

    return {**git_state(), "packages": package_versions(), "device": device or device_name(),
            "platform": platform.platform(), "seed": seed,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


@dataclass
class Claim:
    key: str
    text: str  # the paper's claim, in words
    criterion: str  # how our verdict is decided, in words
    paper: str  # the paper's number or statement
    ours: str  # our measured value, formatted
    holds: bool  # computed from the criterion
    scale: str  # the run's scale: smoke runs carry no evidence either way

    @property
    def verdict(self) -> str:
        if self.scale == "smoke":
            return "not assessed at smoke scale"
        return "reproduced" if self.holds else "not reproduced"


class Run:
    """Collects one notebook run's numbers and claims and writes them as JSON."""

    def __init__(self, figure_id: str, scale: str, params: dict[str, Any], seed: int | None = None) -> None:
        from .scales import check_scale

        self.figure_id, self.scale = figure_id, check_scale(scale)
        self.params = params
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

    def claim(self, key: str, text: str, *, criterion: str, paper: str, ours: str, holds: bool) -> Claim:
        c = Claim(key, text, criterion, paper, ours, bool(holds), self.scale)
        self.claims.append(c)
        _glue(f"verdict_{key}", c.verdict)
        return c

    def claims_table(self):
        """Claims as a styled table (claim, criterion, paper, ours, verdict), text never truncated."""
        import pandas as pd

        frame = pd.DataFrame([{"claim": c.text, "criterion": c.criterion, "paper": c.paper, "ours": c.ours,
                               "verdict": c.verdict} for c in self.claims])
        return (frame.style.hide(axis="index").format(escape="html")
                .set_properties(**{"text-align": "left", "white-space": "normal"}))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.figure_id, "scale": self.scale, "params": self.params,
                "provenance": {**self.provenance, "compute_seconds": round(time.perf_counter() - self._t0, 1)},
                "numbers": self.numbers,
                "claims": [{**asdict(c), "verdict": c.verdict} for c in self.claims]}

    def save(self, path: str | os.PathLike | None = None) -> Path:
        default = paths.RUNS_DIR / "interactive" / f"{self.figure_id}.results.json"
        path = Path(path or os.environ.get(RESULTS_ENV) or default)
        atomic_write_json(path, self.to_dict())
        return path


def _glue(key: str, value: Any) -> None:
    try:
        from myst_nb import glue
    except ImportError:  # outside the book tool chain: numbers still go to the JSON
        return
    if "ipykernel" in sys.modules:
        glue(key, value, display=False)
