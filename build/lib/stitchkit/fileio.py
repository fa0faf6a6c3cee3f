"""Atomic file writes: write to a temporary file in the target folder, fsync, rename."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


STALE_TMP_SECONDS = 600  # a temporary file untouched this long belongs to a killed writer


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.
    An OS error (disk full, no permission) names ``path``; a writer killed outright leaves its
    ``.<name>.*.tmp`` behind, which :func:`remove_stale_tmp` clears later."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _naming(exc, path) from exc
    try:
        # mkstemp creates the file readable by its owner alone (0600): give it the mode an ordinary
        # file gets (0666 less the umask), so that other users of a shared cache can read it
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from exc
        raise
    return path


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` with ``path`` as its file name (ENOSPC from a write names no file by itself)."""
    if exc.filename is not None and str(path) in str(exc.filename):
        return exc
    return type(exc)(exc.errno, f"{exc.strerror or exc} (writing {path})", str(path))


def remove_stale_tmp(folder: str | os.PathLike, older_than: float = STALE_TMP_SECONDS) -> list[Path]:
    """Delete the temporary files of :func:`atomic_write_bytes` under ``folder`` that no writer
    has touched for ``older_than`` seconds (left by a process killed mid-write; a live writer's
    file is younger); returns them."""
    import time

    folder, now, gone = Path(folder), time.time(), []
    if not folder.is_dir():
        return gone
    for tmp in folder.rglob(".*.tmp"):
        try:
            if now - tmp.stat().st_mtime > older_than:
                tmp.unlink()
                gone.append(tmp)
        except OSError:  # another process removed or replaced it meanwhile
            continue
    return gone


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_jsonable) + "\n")


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "item"):  # numpy / torch scalars
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


_CLEANED: set[Path] = set()


def remove_stale_tmp_once(folder: str | os.PathLike) -> None:
    """:func:`remove_stale_tmp` on ``folder``, once per process (the cache's entry points call it)."""
    folder = Path(folder).resolve()
    if folder not in _CLEANED:
        _CLEANED.add(folder)
        remove_stale_tmp(folder)

