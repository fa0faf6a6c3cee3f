"""Atomic file writes (write to a temporary file in the target folder, fsync, rename; a set of
files renamed into place together: :func:`atomic_write_files`), and output folders: a fresh one
claimed atomically (:func:`fresh_folder`), one checked writable before any compute
(:func:`output_folder`), held by one run at a time (:func:`claimed`)."""

from __future__ import annotations

import contextlib
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


# --------------------------------------------------------------------------------------------
# Output folders: claimed by one run, checked writable before any compute, written as a set


class OutputFolderError(OSError):
    """An output folder that cannot be created or written; the message names it."""


def fresh_folder(parent: Path, name: str) -> Path:
    """A new folder ``parent/name`` claimed by this run alone: ``name-2``, ``name-3``, ... when
    another run (started in the same second, say) has it already. ``mkdir`` without ``exist_ok``
    claims it atomically, so two runs never share one."""
    parent = Path(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(f"cannot write to {parent}: {exc.strerror or exc}; choose a writable "
                                "output folder (--out)") from None
    for n in range(1, 1000):
        path = parent / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputFolderError(f"cannot write to {path}: {exc.strerror or exc}; choose a writable "
                                    "output folder (--out)") from None
    raise OutputFolderError(f"no free folder for {name} in {parent} after 999 tries")


def output_folder(path: str | os.PathLike) -> Path:
    """Create ``path`` and check that a file can be written in it, before any compute; raises
    :class:`OutputFolderError` naming it."""
    import tempfile

    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputFolderError(f"cannot write to {path}: {exc.strerror or exc}; choose a writable "
                                "output folder (--out)") from None
    return path


@contextlib.contextmanager
def claimed(path: str | os.PathLike):
    """Hold ``path`` (an output folder) for this run alone while the context lasts: a second run
    given the same ``--out`` while the first is writing there is refused, naming the folder, before
    it computes anything (two runs into one folder both exited 0 and the first one's results were
    lost). A POSIX lock on the folder itself (nothing is left in it), released when the run ends
    however it ends, even killed."""
    try:
        import fcntl
    except ImportError:  # no POSIX file locks (Windows): concurrent runs are not detected
        yield Path(path)
        return
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise OutputFolderError(f"cannot write to {path}: {exc.strerror or exc}; choose a writable "
                                "output folder (--out)") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputFolderError(f"another run is writing to {path} now; give this one another output folder "
                                    "(--out), or leave --out out for a fresh one") from None
        try:
            yield path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def atomic_write_files(folder: str | os.PathLike, files: dict[str, str | bytes]) -> list[Path]:
    """Write ``files`` (name -> text or bytes) into ``folder`` as one set: every file is written in
    full to a temporary file first (where a full disk or a signal strikes), then all are renamed into
    place back to back with SIGINT and SIGTERM held off, so that a reader never finds a new file of
    the set beside an old one. A failure before the renames leaves the old set as it was and names
    the path."""
    import signal

    folder = Path(folder)
    temps: list[tuple[str, Path]] = []
    try:
        for name, data in files.items():
            target = folder / name
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
            except OSError as exc:
                raise _naming(exc, target) from exc
            temps.append((name, Path(tmp)))
            try:
                os.fchmod(fd, 0o666 & ~_umask())
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data.encode() if isinstance(data, str) else data)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise _naming(exc, target) from exc
        held = hasattr(signal, "pthread_sigmask")
        if held:
            old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            for name, tmp in temps:
                os.replace(tmp, folder / name)
        finally:
            if held:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
    finally:
        for _, tmp in temps:
            if tmp.exists():
                tmp.unlink()
    return [folder / name for name in files]
