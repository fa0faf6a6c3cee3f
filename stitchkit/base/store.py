"""A content-addressed store of artifacts (trained models, trained stitches), and stable keys.

An entry is one file ``<cache>/store/<key[:2]>/<key>.pt``. Its key is the SHA-256 of the
*canonical form* of its specification: for a dataclass, the type name and only the fields whose
value differs from the field's default (recursively), so adding a field with a default to a
spec never changes an existing key, and a model trained on a GPU survives library growth.
Fields a class lists in ``NOT_IN_KEY`` (e.g. the numeric precision, a choice of the hardware)
are left out of the key altogether; fields it lists in ``ALWAYS_IN_KEY`` are kept even at their
default: a field added because entries computed before it are *wrong* (a fixed defect), so that
none of them is found under the new key. A *salt* (a string, e.g. the fingerprint of the data a model
is trained on, :func:`stitchkit.data.datasets.fingerprint`) can be hashed in beside the spec; without
one (``salt=None``) the key is the spec's alone, as before.

The file starts with a header line ``STITCHKIT-ENTRY 2 <sha256 of the rest>``, then one line of
JSON naming what the entry is (its canonical configuration and salt), then the payload: metrics and
tensors, ``torch.save``d. Reading an entry never runs code from the file: the checksum is verified,
then the JSON line is hashed and must give the entry's own key (a valid entry copied over another's
file is not that entry) *before* the payload is deserialised, and the payload is read with
``torch.load(weights_only=True)``, whose unpickler builds tensors and plain data only (a planted
payload that would run code is refused, and the entry recomputed). An entry of the first format
(``STITCHKIT-ENTRY 1``, the whole document pickled) is read the same safe way and rewritten in the
second, so cached networks survive the change. Metrics hold plain data (numbers, strings, bytes,
lists, dicts, tensors); numpy scalars are stored as Python numbers, and anything else is refused
when the entry is written, naming it. Writes are atomic (temporary file + rename); a truncated or
corrupt entry fails its checksum, is deleted with a warning and recomputed. Training checkpoints
live beside the store under ``partial/<key>.pt``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import io
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from . import paths
from .fileio import atomic_write_bytes, remove_stale_tmp_once

FORMAT_VERSION = 1  # of the keys (config_key): unchanged by the file format
FILE_FORMAT = 2  # of an entry's file (see the module docstring)
_MAGIC = b"STITCHKIT-ENTRY"


class CorruptEntryError(RuntimeError):
    pass


# What this process read from and wrote to any store, with the compute seconds each entry records
# (a model's training time, a stitch's share of its pass): key -> {"seconds": s, "new": bool}.
# The results file of a page keeps it, so the cost of a page *from an empty cache* can be estimated
# even when its models came from the cache (see :func:`ledger_summary`).
_LEDGER: dict[str, dict[str, Any]] = {}


def _entry_seconds(metrics: Any) -> float | None:
    """The compute seconds an entry records, or None when it records none (made before the record)."""
    if not isinstance(metrics, dict):
        return None
    value = metrics.get("train_seconds", metrics.get("seconds"))
    return float(value) if isinstance(value, (int, float)) else None


def _record(key: str, metrics: Any, new: bool) -> None:
    if key not in _LEDGER or new:
        seconds = _entry_seconds(metrics)
        # an entry computed by resuming an interrupted run: the part done before counts as cached
        resumed = metrics.get("resumed_seconds", 0.0) if new and isinstance(metrics, dict) else 0.0
        _LEDGER[key] = {"seconds": None if seconds is None else round(seconds, 2), "new": new,
                        "resumed": round(float(resumed or 0.0), 2)}


def ledger_summary() -> dict[str, Any]:
    """The compute recorded by the entries this process used: seconds of the entries it computed
    (``new_seconds``), of those it found in the cache (``cached_seconds``, with the part of a
    resumed entry that an interrupted run had computed before), and per entry (key
    prefix -> seconds, entries with recorded seconds only) so that pages sharing entries can be
    summed without counting one twice. ``unrecorded``: entries found in the cache that record no
    compute time (made before the record existed), so that an estimate built on this says "at least"."""
    new = sum((v["seconds"] or 0.0) - v.get("resumed", 0.0) for v in _LEDGER.values() if v["new"])
    cached = sum((v["seconds"] or 0.0) if not v["new"] else v.get("resumed", 0.0) for v in _LEDGER.values())
    return {"new_seconds": round(new, 1), "cached_seconds": round(cached, 1),
            "entries": {k[:16]: v["seconds"] for k, v in sorted(_LEDGER.items()) if (v["seconds"] or 0.0) > 0},
            "unrecorded": sum(1 for v in _LEDGER.values() if v["seconds"] is None and not v["new"])}


def canonical(obj: Any) -> Any:
    """The JSON-able form of ``obj`` that its key hashes (see the module docstring)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        skip = set(getattr(obj, "NOT_IN_KEY", ()))
        always = set(getattr(obj, "ALWAYS_IN_KEY", ()))
        out: dict[str, Any] = {"__type__": type(obj).__name__}
        for f in dataclasses.fields(obj):
            if f.name in skip:
                continue
            value = getattr(obj, f.name)
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = dataclasses.MISSING
            if f.name not in always and default is not dataclasses.MISSING and canonical(value) == canonical(default):
                continue
            out[f.name] = canonical(value)
        return out
    if isinstance(obj, dict):
        return {str(k): canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, float) and obj.is_integer():
        return int(obj)  # 5.0 and 5 are the same setting
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    raise TypeError(f"cannot key a {type(obj).__name__}: {obj!r}")


def config_key(config: Any, salt: str | None = None) -> str:
    """SHA-256 of the canonical JSON of ``config`` (see :func:`canonical`) and, if given,
    ``salt``; ``salt=None`` gives the key of ``config`` alone."""
    doc: dict[str, Any] = {"format": FORMAT_VERSION, "config": canonical(config)}
    if salt is not None:
        doc["salt"] = str(salt)
    blob = json.dumps(doc, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class Entry:
    key: str
    config: Any
    metrics: dict
    tensors: dict[str, torch.Tensor]
    salt: str | None = None


def plain(obj: Any, where: str = "metrics") -> Any:
    """``obj`` as the plain data an entry holds: dicts, lists, tuples, strings, bytes, numbers,
    booleans, None and tensors, with numpy scalars turned into Python numbers; anything else is a
    TypeError naming where it is (``metrics['history'][0]``)."""
    if isinstance(obj, dict):
        return {k: plain(v, f"{where}[{k!r}]") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        out = [plain(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        return out if isinstance(obj, list) else tuple(out)
    item = getattr(obj, "item", None)
    if type(obj).__module__ == "numpy" and callable(item) and getattr(obj, "shape", None) == ():
        return item()  # (before the next test: numpy's float64 is a float, but no plain one)
    if obj is None or isinstance(obj, (str, bytes, bool, int, float, torch.Tensor)):
        return obj
    raise TypeError(f"a cache entry holds plain data only (numbers, strings, bytes, lists, dicts, tensors); "
                    f"{where} is a {type(obj).__module__}.{type(obj).__name__}")


def _encode(identity: dict, payload: dict) -> bytes:
    buf = io.BytesIO()
    torch.save(payload, buf)
    line = json.dumps(identity, sort_keys=True).encode()
    rest = line + b"\n" + buf.getvalue()
    return b"%s %d %s\n" % (_MAGIC, FILE_FORMAT, hashlib.sha256(rest).hexdigest().encode()) + rest


def _check_key(identity: dict, key: str, path: Path) -> None:
    """The entry is bound to its name: a valid entry copied over another's file is not that entry."""
    try:
        found = config_key(identity["config"], identity.get("salt"))
    except TypeError as exc:
        raise CorruptEntryError(f"{path}: its configuration cannot be keyed ({exc})") from None
    if found != key:
        raise CorruptEntryError(f"{path}: its stored configuration hashes to {found[:12]}, not to its name "
                                f"{key[:12]} (an entry stored under another key)")


def _numpy_scalars() -> list:
    """The numpy constructors a first-format entry may hold (numpy scalars in its metrics): data
    constructors only, allowed when such an entry is read so that it migrates instead of being
    trained again."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    return [core.multiarray.scalar, np.dtype] + [getattr(np.dtypes, n) for n in dir(np.dtypes) if n.endswith("DType")]


def _safe_load(payload: bytes, path: Path, numpy_scalars: bool = False) -> Any:
    """``torch.load`` of tensors and plain data only (with ``numpy_scalars``, numpy's scalars
    too: :func:`_numpy_scalars`): a pickle that would build any other object (and so could run
    code) is refused as a corrupt entry."""
    try:
        if numpy_scalars:
            with torch.serialization.safe_globals(_numpy_scalars()):
                return torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
        return torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError for a refused global; anything else for garbage
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        named = [line for line in lines if "GLOBAL" in line or "Unsupported" in line] or lines[:1]
        raise CorruptEntryError(f"{path}: its payload is not tensors and plain data, refused unread "
                                f"({type(exc).__name__}: {named[0][:200] if named else ''})") from None


class Store:
    """A folder of content-addressed entries (default ``<cache>/store``)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.cache_root() / "store"
        remove_stale_tmp_once(self.root.parent)  # store/, partial/, datasets/: what killed writers left

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.pt"

    @contextlib.contextmanager
    def lock(self, *keys: str, what: str = ""):
        """Hold an exclusive lock on each of ``keys`` (a file lock under ``<cache>/locks``, taken in
        sorted order, so runs locking several never deadlock): a second run that needs an entry
        another run is computing waits for it, then finds it in the store, instead of computing it
        again. Says so in the terminal when it has to wait."""
        try:
            import fcntl
        except ImportError:  # no POSIX file locks (Windows): concurrent runs may repeat work
            yield
            return
        folder = self.root.parent / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            for key in sorted(set(keys)):
                fh = stack.enter_context(open(folder / f"{key}.lock", "a+"))
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    from .progress import say

                    say(f"[stitchkit] waiting for another run computing {what or key[:12]} (cache key {key[:12]})")
                    fcntl.flock(fh, fcntl.LOCK_EX)
                stack.callback(fcntl.flock, fh, fcntl.LOCK_UN)
            yield

    def partial(self, key: str) -> Path:
        """Where an interrupted computation of ``key`` keeps its checkpoint."""
        return self.root.parent / "partial" / f"{key}.pt"

    def put(self, config: Any, metrics: dict, tensors: dict[str, torch.Tensor], salt: str | None = None) -> Entry:
        """Store (metrics, tensors) under the key of ``config`` and ``salt``; metrics must be plain
        data (see the module docstring: numpy scalars become Python numbers, anything else is a
        TypeError naming it, before anything is written)."""
        key = config_key(config, salt)
        metrics = plain(metrics)
        tensors = {k: v.detach().cpu() for k, v in tensors.items()}
        identity = {"config": canonical(config), "salt": salt}
        atomic_write_bytes(self.path(key), _encode(identity, {"metrics": metrics, "tensors": tensors}))
        _record(key, metrics, new=True)
        return Entry(key, identity["config"], metrics, tensors, salt)

    def read(self, key: str) -> Entry:
        """Read and verify an entry; raises FileNotFoundError or CorruptEntryError. Nothing in the
        file is deserialised before its checksum and its key are verified, and then only as
        tensors and plain data (``weights_only``). An entry of the first format is rewritten in
        the second once read."""
        path = self.path(key)
        raw = path.read_bytes()
        head, sep, rest = raw.partition(b"\n")
        parts = head.split(b" ")
        if not sep or len(parts) != 3 or parts[0] != _MAGIC or parts[1] not in (b"1", b"2"):
            raise CorruptEntryError(f"{path}: bad header")
        if hashlib.sha256(rest).hexdigest().encode() != parts[2]:
            raise CorruptEntryError(f"{path}: checksum mismatch (truncated or corrupt)")
        if parts[1] == b"1":
            obj = _safe_load(rest, path, numpy_scalars=True)
            if not isinstance(obj, dict) or not {"config", "metrics", "tensors"} <= set(obj):
                raise CorruptEntryError(f"{path}: not a stitchkit entry (missing config, metrics or tensors)")
            identity = {"config": obj["config"], "salt": obj.get("salt")}
            _check_key(identity, key, path)
            obj["metrics"] = plain(obj["metrics"])  # as the second format holds them, and as a fresh read returns them
            atomic_write_bytes(path, _encode(identity, {"metrics": obj["metrics"], "tensors": obj["tensors"]}))
        else:
            line, sep, payload = rest.partition(b"\n")
            try:
                identity = json.loads(line) if sep else None
            except (ValueError, UnicodeDecodeError):
                identity = None
            if not isinstance(identity, dict) or "config" not in identity:
                raise CorruptEntryError(f"{path}: its identity line is not the JSON of a configuration")
            _check_key(identity, key, path)  # before the payload is read at all
            obj = _safe_load(payload, path)
            if not isinstance(obj, dict) or not {"metrics", "tensors"} <= set(obj):
                raise CorruptEntryError(f"{path}: not a stitchkit entry (missing metrics or tensors)")
        _record(key, obj["metrics"], new=False)
        return Entry(key, identity["config"], obj["metrics"], obj["tensors"], identity.get("salt"))

    def get(self, config: Any, salt: str | None = None) -> Entry | None:
        """The entry for ``config`` (and ``salt``), or None if absent; a corrupt entry is removed
        (and None)."""
        key = config_key(config, salt)
        try:
            return self.read(key)
        except FileNotFoundError:
            return None
        except Exception as exc:  # corrupt, truncated, unreadable: recompute
            warnings.warn(f"cache entry {self.path(key)} is corrupt ({exc}); deleted, recomputing", stacklevel=2)
            self.path(key).unlink(missing_ok=True)
            return None

    @contextlib.contextmanager
    def claim(self, config: Any, salt: str | None = None):
        """Claim the entry of ``config`` (and ``salt``) for a computation the caller runs in its own
        frame: yields a :class:`Slot` whose ``entry`` is the stored entry, or None, and then the
        caller computes and ``slot.put(metrics, tensors)`` inside the ``with``::

            with store.claim(spec, salt) as slot:
                if slot.entry is None:
                    slot.put(*compute())
            entry = slot.entry

        What :meth:`get_or_compute` does, step by step: get; if absent, lock the key, get again
        (another run may have computed it while this one waited); the caller computes and puts
        under the lock."""
        with self.claim_all([config], salt) as (slot,):
            yield slot

    @contextlib.contextmanager
    def claim_all(self, configs: Sequence[Any], salt: str | None = None):
        """:meth:`claim` for several entries at once (computed together, e.g. stitches trained in
        one pass): yields one :class:`Slot` per config, in order; the keys of those absent are
        locked together (:meth:`lock`) while the caller computes and puts them."""
        slots = [Slot(self, config, salt, self.get(config, salt)) for config in configs]
        missing = [slot for slot in slots if slot.entry is None]
        if not missing:
            yield slots
            return
        with self.lock(*(config_key(slot.config, salt) for slot in missing)):
            for slot in missing:
                slot.entry = self.get(slot.config, salt)  # another run may have computed it while this one waited
            yield slots

    def get_or_compute(self, config: Any, compute: Callable[[], tuple[dict, dict[str, torch.Tensor]]],
                       salt: str | None = None) -> Entry:
        """Return the stored entry for ``config`` (and ``salt``) or compute (metrics, tensors),
        store and return it (:meth:`claim`, with ``compute`` run inside it)."""
        with self.claim(config, salt) as slot:
            if slot.entry is None:
                slot.put(*compute())
        return slot.entry


@dataclass
class Slot:
    """One entry claimed from a store (:meth:`Store.claim`): ``entry`` is the stored entry, or None
    until the caller computes it and stores it with :meth:`put` (under the claim's lock)."""

    store: Store
    config: Any
    salt: str | None
    entry: Entry | None

    def put(self, metrics: dict, tensors: dict[str, torch.Tensor]) -> Entry:
        """Store (metrics, tensors) as this slot's entry (:meth:`Store.put`) and return it."""
        self.entry = self.store.put(self.config, metrics, tensors, self.salt)
        return self.entry
