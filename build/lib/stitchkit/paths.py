"""Every path the project uses, defined in one place.

Resolution order for the data root: explicit argument, else ``$STITCHKIT_DATA_ROOT``, else
``<repo>/data``. Derived artifacts (decoded datasets, trained models) go to the cache root:
``$STITCHKIT_CACHE``, else ``<repo>/data/cache``, so a read-only data root is fine.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The checkout this package lives in (editable install); falls back to the working directory
# for a plain install, where notebooks/ and book/ are not available anyway.
REPO_ROOT = PACKAGE_DIR.parent if (PACKAGE_DIR.parent / "pyproject.toml").exists() else Path.cwd()

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
BOOK_DIR = REPO_ROOT / "book"
RUNS_DIR = REPO_ROOT / "runs"
BUILD_DIR = REPO_ROOT / "_build"


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Folder searched for raw datasets."""
    if root is not None:
        return Path(root).expanduser().resolve()
    env = os.environ.get("STITCHKIT_DATA_ROOT")
    if env:
        return Path(env).expanduser().resolve()
    return REPO_ROOT / "data"


def cache_root() -> Path:
    """Folder for derived artifacts (decoded datasets, trained models, checkpoints)."""
    env = os.environ.get("STITCHKIT_CACHE")
    path = Path(env).expanduser().resolve() if env else REPO_ROOT / "data" / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path
