"""Where and how a run was made (the commit, the packages, the device) and the committed GPU
spot checks its page shows beside it. Split from :mod:`stitchkit.verdicts.results`, which re-exports the
names."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from . import paths

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
    from .environment import seed_offset_from_env
    from .hardware import MEASURE_PRECISION, default_device, device_name, resolve_precision

    offset = seed_offset_from_env()  # a replication run's (stitchkit replicate): its networks are other seeds
    return {**git_state(), "packages": package_versions(), "device": device or device_name(),
            **({"seed_offset": offset} if offset else {}),
            "precision": resolve_precision("auto", default_device()),  # training's
            "measure_precision": MEASURE_PRECISION,
            "platform": platform.platform(), "seed": seed,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
