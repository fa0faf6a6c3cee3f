"""Every path the project uses, defined in one place.

Resolution order for the data root: explicit argument, else ``$STITCHKIT_DATA_ROOT``, else
``<repo>/data``. Derived artifacts (decoded datasets, trained models) go to the cache root:
``$STITCHKIT_CACHE``; else, in the project's checkout (an editable install, or a folder whose
``pyproject.toml`` names the stitchkit project), ``<repo>/data/cache``, which the book relies on;
else (a plain install used from any other folder) the platform's user cache folder
(:func:`user_cache_dir`), never a ``data/cache`` made silently in the current folder. Nothing
derived goes to the data root, so a read-only data root is fine (only a download, when asked for,
writes there: :mod:`stitchkit.data.archives`).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # stitchkit/ (this module is in stitchkit/base/)
CACHE_ENV = "STITCHKIT_CACHE"


def is_checkout(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is this project's checkout: its ``pyproject.toml`` names the stitchkit
    project."""
    try:
        text = (Path(folder) / "pyproject.toml").read_text(errors="replace")
    except OSError:
        return False
    return re.search(r'^name\s*=\s*["\']stitchkit["\']', text, re.MULTILINE) is not None


# The checkout this package lives in (editable install); falls back to the working directory
# for a plain install, where notebooks/ and book/ are not available anyway.
REPO_ROOT = PACKAGE_DIR.parent if (PACKAGE_DIR.parent / "pyproject.toml").exists() else Path.cwd()
# Whether REPO_ROOT is the project's checkout (not merely the folder a plain install runs in):
# decides whether the default cache is <repo>/data/cache or the user cache folder.
IN_CHECKOUT = is_checkout(REPO_ROOT)

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


def user_cache_dir(app: str = "stitchkit") -> Path:
    """The platform's per-user cache folder for ``app``: ``$XDG_CACHE_HOME/<app>`` (an absolute
    ``XDG_CACHE_HOME`` only, as the XDG spec says) or ``~/.cache/<app>`` on Linux and other Unix
    systems, ``~/Library/Caches/<app>`` on macOS, ``%LOCALAPPDATA%\\<app>\\Cache`` on Windows."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return (Path(local) if local else Path.home() / "AppData" / "Local") / app / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / app
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") / app


def cache_origin() -> str:
    """Why the cache root is where it is: ``"env"`` (``$STITCHKIT_CACHE``), ``"checkout"``
    (``<repo>/data/cache``) or ``"user"`` (:func:`user_cache_dir`)."""
    if os.environ.get(CACHE_ENV):
        return "env"
    return "checkout" if IN_CHECKOUT else "user"


def cache_root() -> Path:
    """Folder for derived artifacts (decoded datasets, trained models, checkpoints); see the
    module docstring for how it is chosen."""
    origin = cache_origin()
    if origin == "env":
        path = Path(os.environ[CACHE_ENV]).expanduser().resolve()
    elif origin == "checkout":
        path = REPO_ROOT / "data" / "cache"
    else:
        path = user_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path
