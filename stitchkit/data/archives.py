"""Reading a dataset from the data root into a :class:`~stitchkit.data.splits.Split`: finding its
source, decoding it, the decoded-dataset cache, and the source's fingerprint.

Sources, searched in the data root in this order:

- canonical formats: ``cifar-10-batches-py/`` pickles; MNIST IDX files (optionally ``.gz``,
  also under ``MNIST/raw/``);
- an image-folder tree ``<name>/<split>/<class>/<file>``, or a ``.tar.gz`` of one such as
  ``cifar10-images.tar.gz`` (class folders sort into label order);
- when none of these exists and a download is asked for (``load(..., download=True)``, or
  ``STITCHKIT_DOWNLOAD=1`` for every loader that leaves ``download`` unset: what ``stitchkit run``
  and ``stitchkit compare`` reach), the canonical archives, fetched into the data root and checked
  against their published MD5s by :mod:`stitchkit.data.downloads` (no torchvision).

Whatever the source, it is decoded once into a cache file (``<cache>/datasets``) keyed by the
source's path, size and mtime. The first decoded split a process writes to a cache root it did
not get from ``$STITCHKIT_CACHE`` is announced on the terminal, one line saying where
(:func:`stitchkit.base.paths.cache_root`: in a plain install, the user's cache folder).

Each split carries the *fingerprint* of its source (:func:`fingerprint`): the SHA-256 of an
archive (the value ``sha256sum`` prints; computed once per path, size and mtime and remembered
beside the decoded cache), of the canonical files, or of an image folder's sorted file list with
sizes. It depends on the content, not on where the data root is, and goes into the cache key of
every model and stitch trained on the data, so pointing the data root at different data never
reuses a model trained on the old.

A source is checked as it is read: a corrupt or truncated archive or file, or an image that does
not decode, raises :class:`~stitchkit.data.integrity.CorruptDataError` naming it; train and test must
have the same classes; and a split whose image or class count (or image shape) differs from the
official release raises :class:`~stitchkit.data.integrity.IncompleteDataError`, unless a partial
dataset is allowed explicitly (``load(..., allow_partial=True)`` or
``STITCHKIT_ALLOW_PARTIAL_DATA=1``). The errors and the size check are in :mod:`stitchkit.data.integrity`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pickle
import tarfile
import warnings
import zlib
from pathlib import Path

import numpy as np
import torch

from ..base import paths
from ..base.environment import DOWNLOAD_ENV
from ..base.fileio import atomic_write_bytes, remove_stale_tmp_once
from ..base.progress import terminal
from .downloads import CHECKSUMS, download_canonical, download_requested
from .integrity import CorruptDataError, DataNotFoundError, check_shape
from .splits import DATASETS, SPLITS, Split


def load(name: str, split: str = "train", root: str | os.PathLike | None = None, download: bool | None = None, *,
         allow_partial: bool | None = None) -> Split:
    """Load ``name`` ('cifar10' | 'mnist'), ``split`` ('train' | 'test') as a :class:`Split`.

    ``root`` defaults to ``$STITCHKIT_DATA_ROOT`` or ``<repo>/data``. ``download``: fetch the
    canonical archives into ``root`` when no source is there (default: ``$STITCHKIT_DOWNLOAD`` set
    to 1/true/yes; see the module docstring). Raises :class:`DataNotFoundError` listing every place
    searched when no source exists (or naming each URL tried when a download fails),
    :class:`CorruptDataError` naming the file when the source does not read or a download does not
    match its checksum, and :class:`IncompleteDataError` when the split's size differs from the
    official release, unless ``allow_partial`` (default: ``$STITCHKIT_ALLOW_PARTIAL_DATA`` set to
    1/true/yes).
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    kind, path = _source(name, root, download)
    cache_file = _cache_file(name, split, path)
    data = _LOADED.get(cache_file)
    if data is None:
        fp = source_fingerprint(kind, path)
        data = _read_cache_checked(cache_file, fp)
        if data is None:
            decoder = {"cifar_pickle": _decode_cifar_pickles, "mnist_idx": _decode_mnist_idx,
                       "folder": _decode_folder, "tar": _decode_tar}[kind]
            decoded = decoder(path, split)
            data = Split(decoded.images, decoded.labels, decoded.classes, fp)
            _write_cache(cache_file, data)
        _LOADED[cache_file] = data
    check_shape(name, split, data, path, allow_partial)
    return data


def _source(name: str, root: str | os.PathLike | None, download: bool | None = None) -> tuple[str, Path]:
    """(kind, path) of ``name``'s source under the data root, downloaded first when none is there
    and :func:`download_requested`; raises :class:`DataNotFoundError` listing every place searched."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    base = paths.data_root(root)
    source, looked = _find_source(name, base)
    if source is None and download_requested(download):
        download_canonical(name, base)
        source, looked = _find_source(name, base)
    if source is None:
        raise _not_found(name, base, looked)
    return source


def locate(name: str, root: str | os.PathLike | None = None, download: bool | None = None) -> Path:
    """Where ``name``'s source is (a folder or an archive), without reading it: what a batch checks
    before any training (downloading it first, as :func:`load` would). Raises
    :class:`DataNotFoundError` listing every place searched."""
    return _source(name, root, download)[1]


def fingerprint(name: str, root: str | os.PathLike | None = None) -> str:
    """The fingerprint (64 hex digits) of the source that ``load(name, ..., root)`` reads; the
    same for both splits. See the module docstring; raises :class:`DataNotFoundError`."""
    return source_fingerprint(*_source(name, root))


def _not_found(name: str, base: Path, looked: list[Path]) -> DataNotFoundError:
    hint = (
        f"Provide {name} in one of these forms, or set STITCHKIT_DATA_ROOT to a folder that has it "
        f"(`make` uses ../shared/data when it exists); with a network, set {DOWNLOAD_ENV}=1 (or pass "
        f"load(..., download=True)) to download the canonical archives ({', '.join(CHECKSUMS[name])}) into {base}."
    )
    found = [_why_unusable(p) for p in looked if p.is_dir()]
    there = "".join(f"\n{why}" for why in found if why)
    return DataNotFoundError(f"dataset {name!r} not found under {base}. Looked for:\n  - "
                             + "\n  - ".join(str(p) for p in looked) + there + "\n" + hint)


def _why_unusable(folder: Path) -> str | None:
    """Why a folder that exists where a dataset was looked for is not one (or None)."""
    inside = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))[:6]
    if folder.name == "cifar-10-batches-py":
        return f"{folder} exists but has no data_batch_1 (it holds: {', '.join(inside) or 'nothing'})"
    if folder.name in ("cifar10", "mnist"):
        return (f"{folder} exists but has no train/ and test/ folders (it holds: {', '.join(inside) or 'nothing'}): "
                f"an image folder needs {folder.name}/<split>/<class>/<image>, with split train and test")
    return None


# Splits already read in this process (treat them as read-only: they are shared).
_LOADED: dict[Path, Split] = {}


def _candidates(name: str, base: Path) -> list[tuple[str, Path]]:
    if name == "cifar10":
        return [("cifar_pickle", base / "cifar-10-batches-py"), ("folder", base / "cifar10"),
                ("tar", base / "cifar10-images.tar.gz")]
    return [("mnist_idx", base), ("mnist_idx", base / "MNIST" / "raw"), ("folder", base / "mnist"),
            ("tar", base / "mnist-images.tar.gz")]


def _find_source(name: str, base: Path) -> tuple[tuple[str, Path] | None, list[Path]]:
    looked = []
    for kind, path in _candidates(name, base):
        if kind == "mnist_idx":
            looked.append(path / "train-images-idx3-ubyte[.gz]")
            if _idx_file(path, "train-images-idx3-ubyte") is not None:
                return (kind, path), looked
            continue
        looked.append(path)
        if kind == "cifar_pickle" and (path / "data_batch_1").exists():
            return (kind, path), looked
        if kind == "folder" and (path / "train").is_dir():
            return (kind, path), looked
        if kind == "tar" and path.is_file():
            return (kind, path), looked
    return None, looked


# ---- cache of decoded splits


def _cache_file(name: str, split: str, source: Path) -> Path:
    st = source.stat()
    tag = hashlib.sha256(f"{source.resolve()}|{st.st_size}|{int(st.st_mtime)}".encode()).hexdigest()[:16]
    remove_stale_tmp_once(paths.cache_root() / "datasets")  # a decode killed mid-write left its .tmp
    return paths.cache_root() / "datasets" / f"{name}-{split}-{tag}.npz"


_ANNOUNCED: list[Path] = []  # the cache file whose write this process announced (at most one)


def _write_cache(path: Path, data: Split) -> None:
    buf = io.BytesIO()
    np.savez(buf, images=data.images.numpy(), labels=data.labels.numpy(), classes=np.array(data.classes),
             fingerprint=np.array(data.fingerprint))
    if not _ANNOUNCED and paths.cache_origin() != "env":
        _ANNOUNCED.append(path)
        where = "the user cache folder" if paths.cache_origin() == "user" else "the checkout's cache"
        _announce(f"stitchkit: writing decoded datasets to {path.parent}, {where} (this first one, {path.name}, "
                  f"is {len(buf.getvalue()) / 1e6:.1f} MB); to keep them elsewhere set {paths.CACHE_ENV} to another "
                  "folder, and move or delete this one")
    atomic_write_bytes(path, buf.getvalue())


def _announce(line: str) -> None:
    """One line on the terminal (standard error; never on a notebook's page), whatever
    ``STITCHKIT_PROGRESS`` says: a notice, not progress."""
    stream = terminal()
    if stream is not None:
        print(line, file=stream, flush=True)


def _read_cache(path: Path) -> Split:
    with np.load(path, allow_pickle=False) as z:
        fp = str(z["fingerprint"]) if "fingerprint" in z.files else ""
        return Split(torch.from_numpy(z["images"].copy()), torch.from_numpy(z["labels"].copy()),
                     tuple(str(c) for c in z["classes"]), fp)


def _read_cache_checked(path: Path, fp: str) -> Split | None:
    """The decoded split in ``path`` if it is readable and was decoded from the source with
    fingerprint ``fp`` (older caches recorded none: their key already pins path, size, mtime);
    None otherwise. An unreadable file is deleted with a warning naming it."""
    if not path.exists():
        return None
    try:
        data = _read_cache(path)
    except Exception as exc:  # truncated, corrupt, not an npz: decode again
        warnings.warn(f"decoded-dataset cache {path} is corrupt ({type(exc).__name__}: {exc}); deleted, "
                      "decoding the source again", stacklevel=3)
        path.unlink(missing_ok=True)
        return None
    if data.fingerprint and data.fingerprint != fp:
        return None  # the source's content changed under the same path, size and mtime
    return Split(data.images, data.labels, data.classes, fp)


# ---- source fingerprints

_SHA256_MEMO: dict[tuple[str, int, int], str] = {}


def _file_sha256(path: Path) -> str:
    """SHA-256 of a file, computed once per (path, size, mtime) and remembered in
    ``<cache>/datasets/sha256-<tag>.txt`` (a damaged memo is recomputed)."""
    path = Path(path).resolve()
    st = path.stat()
    ident = (str(path), st.st_size, st.st_mtime_ns)
    if ident in _SHA256_MEMO:
        return _SHA256_MEMO[ident]
    tag = hashlib.sha256("|".join(map(str, ident)).encode()).hexdigest()[:16]
    memo = paths.cache_root() / "datasets" / f"sha256-{tag}.txt"
    digest = None
    if memo.exists():
        # "<digest> <check>": the check (a hash of the file's identity and the digest) catches a
        # memo altered after it was written, a flipped character included; a memo of the older
        # one-field format is recomputed once, silently
        parts = memo.read_text(errors="replace").split()
        if len(parts) == 2 and parts[1] == _memo_check(ident, parts[0]):
            digest = parts[0]
        elif len(parts) != 1:
            warnings.warn(f"checksum memo {memo} is corrupt; recomputing the SHA-256 of {path}", stacklevel=2)
        elif not (len(parts[0]) == 64 and all(c in "0123456789abcdef" for c in parts[0])):
            warnings.warn(f"checksum memo {memo} is corrupt; recomputing the SHA-256 of {path}", stacklevel=2)
    if digest is None:
        with open(path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        atomic_write_bytes(memo, f"{digest} {_memo_check(ident, digest)}\n".encode())
    _SHA256_MEMO[ident] = digest
    return digest


def _memo_check(ident: tuple, digest: str) -> str:
    return hashlib.sha256(f"{'|'.join(map(str, ident))}|{digest}".encode()).hexdigest()[:16]


def _combine(lines: list[str]) -> str:
    return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()


def source_fingerprint(kind: str, path: Path) -> str:
    """Fingerprint of a source found by the loader: an archive's SHA-256; the SHA-256 of the
    canonical files' names and hashes; or of an image folder's sorted (relative path, size) list."""
    path = Path(path)
    if kind == "tar":
        return _file_sha256(path)
    if kind == "cifar_pickle":
        names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
        return _combine([f"{n} {_file_sha256(path / n)}" for n in names if (path / n).is_file()])
    if kind == "mnist_idx":
        files = [_idx_file(path, f"{p}-{what}") for p in ("train", "t10k")
                 for what in ("images-idx3-ubyte", "labels-idx1-ubyte")]
        return _combine([f"{f.name} {_file_sha256(f)}" for f in files if f is not None])
    if kind == "folder":
        lines = [f"{f.relative_to(path).as_posix()} {f.stat().st_size}"
                 for split in SPLITS for f in _image_files(path / split)]
        return _combine(lines)
    raise ValueError(f"unknown source kind {kind!r}")


# ---- decoders

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def _decode_cifar_pickles(path: Path, split: str) -> Split:
    files = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    images, labels = [], []
    for f in files:
        if not (path / f).is_file():
            raise CorruptDataError(f"{path / f} is missing: the CIFAR-10 pickles in {path} are incomplete; "
                                   "replace the folder with a complete copy")
        try:
            with open(path / f, "rb") as fh:
                d = pickle.load(fh, encoding="bytes")
            images.append(np.asarray(d[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            labels.append(np.asarray(d[b"labels"], dtype=np.int64))
        except (pickle.UnpicklingError, EOFError, KeyError, ValueError, TypeError, AttributeError) as exc:
            raise CorruptDataError(f"{path / f} is corrupt or truncated ({type(exc).__name__}: {exc}); "
                                   "replace it with a fresh copy of the CIFAR-10 python pickles") from exc
    return Split(torch.from_numpy(np.concatenate(images)), torch.from_numpy(np.concatenate(labels)), CIFAR10_CLASSES)


def _idx_file(folder: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx")):
        if (folder / name).is_file():
            return folder / name
    return None


def read_idx(path: Path) -> np.ndarray:
    """Read an IDX file (optionally gzipped): big-endian header, then unsigned bytes. Raises
    :class:`CorruptDataError` naming the file when it is truncated or not an IDX file."""
    try:
        with (gzip.open if str(path).endswith(".gz") else open)(path, "rb") as fh:
            raw = fh.read()
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise CorruptDataError(f"{path} is corrupt or truncated ({type(exc).__name__}: {exc}); "
                               "replace it with a fresh copy") from exc
    if len(raw) < 4 or raw[:2] != b"\x00\x00" or raw[2] != 0x08:
        raise CorruptDataError(f"{path} is not an unsigned-byte IDX file; replace it with a fresh copy")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    if len(raw) != 4 + 4 * ndim + int(np.prod(shape)):
        raise CorruptDataError(f"{path} is truncated or corrupt: its header announces {shape} bytes of data, "
                               f"the file has {len(raw) - 4 - 4 * ndim}; replace it with a fresh copy")
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _decode_mnist_idx(path: Path, split: str) -> Split:
    prefix = "train" if split == "train" else "t10k"
    img_file, lab_file = _idx_file(path, f"{prefix}-images-idx3-ubyte"), _idx_file(path, f"{prefix}-labels-idx1-ubyte")
    if img_file is None or lab_file is None:
        raise DataNotFoundError(f"MNIST IDX files for split {split!r} missing in {path}")
    images = read_idx(img_file)[:, None].copy()  # (N, 1, 28, 28)
    labels = read_idx(lab_file).astype(np.int64)
    if labels.shape != images.shape[:1]:
        raise CorruptDataError(f"{img_file} has {images.shape[0]} images but {lab_file} has {labels.shape[0]} "
                               "labels; replace them with a matching pair")
    return Split(torch.from_numpy(images), torch.from_numpy(labels), tuple(str(i) for i in range(10)))


def _decode_image(data: bytes, where: str) -> np.ndarray:
    """One encoded image -> (C, H, W) uint8; :class:`CorruptDataError` naming ``where`` if it
    does not decode."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as im:
            arr = np.asarray(im.convert("L") if im.mode in ("L", "1", "P", "I") else im.convert("RGB"))
    except Exception as exc:  # PIL raises OSError, SyntaxError, ValueError... for damaged files
        raise CorruptDataError(f"image {where} does not decode ({type(exc).__name__}: {exc}); the file is "
                               "corrupt: replace it (or the archive it came from) with a fresh copy") from exc
    return arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1)  # (C, H, W)


def _assemble(items: list[tuple[str, str, bytes, str]], source: Path) -> Split:
    """items: (class name, file name, encoded bytes, where it came from, for messages); labels
    follow sorted class names."""
    if not items:
        raise DataNotFoundError(f"{source}: the image folder is empty")
    classes = tuple(sorted({t[0] for t in items}))
    index = {c: i for i, c in enumerate(classes)}
    items.sort(key=lambda t: (index[t[0]], t[1]))
    decoded = [_decode_image(b, where) for _, _, b, where in items]
    first = decoded[0].shape
    odd = next((i for i, a in enumerate(decoded) if a.shape != first), None)
    if odd is not None:
        raise CorruptDataError(f"image {items[odd][3]} has shape {decoded[odd].shape} (C, H, W), the first "
                               f"image {first}; every image of a dataset must have the same size and channels")
    labels = np.array([index[t[0]] for t in items], dtype=np.int64)
    return Split(torch.from_numpy(np.stack(decoded)), torch.from_numpy(labels), classes)


def _image_files(folder: Path) -> list[Path]:
    """Files ``<folder>/<class>/<file>`` in sorted order, skipping hidden files and folders."""
    return [f for f in sorted(folder.glob("*/*"))
            if f.is_file() and not f.name.startswith(".") and not f.parent.name.startswith(".")]


def _check_same_classes(classes: dict[str, set[str]], source: Path) -> None:
    """Train and test must list the same classes: labels follow the sorted class names."""
    train, test = classes.get("train", set()), classes.get("test", set())
    if train != test:
        diff = "; ".join(f"only in {s}: {', '.join(sorted(c))}" for s, c in (("train", train - test),
                                                                          ("test", test - train)) if c)
        raise CorruptDataError(
            f"{source}: the train and test splits have different classes ({diff}). Labels follow the sorted "
            "class names, so both splits need the same class folders: restore the missing ones.")


def _decode_folder(path: Path, split: str) -> Split:
    folder = path / split
    if not folder.is_dir():
        raise DataNotFoundError(f"{folder} does not exist (expected <root>/{split}/<class>/<image>)")
    _check_same_classes({s: {f.parent.name for f in _image_files(path / s)} for s in SPLITS}, path)
    items = []
    for f in _image_files(folder):
        try:
            items.append((f.parent.name, f.name, f.read_bytes(), str(f)))
        except OSError as exc:
            raise CorruptDataError(f"cannot read {f} ({exc.strerror or exc}); fix or replace it") from exc
    return _assemble(items, folder)


def image_folder(path: Path, split: str) -> Split:
    """The images of an image folder ``<path>/<split>/<class>/<image>`` (train and test with the same
    classes; labels follow the sorted class names), decoded to uint8 (N, C, H, W)."""
    return _decode_folder(Path(path), split)


def _decode_tar(path: Path, split: str) -> Split:
    items = []
    classes: dict[str, set[str]] = {s: set() for s in SPLITS}
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                parts = Path(member.name).parts
                # accept <top>/<split>/<class>/<file> and <split>/<class>/<file>
                if not member.isfile() or len(parts) < 3 or parts[-1].startswith(".") or parts[-2].startswith("."):
                    continue
                if parts[-3] in classes:
                    classes[parts[-3]].add(parts[-2])
                if parts[-3] == split:
                    items.append((parts[-2], parts[-1], tar.extractfile(member).read(),
                                  f"{member.name} in {path}"))
            # Read what follows the end-of-archive marker too: a compressed stream checks its
            # CRC and length only at its very end, which is how truncation or a flipped byte shows.
            while tar.fileobj.read(1 << 20):
                pass
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        reason = " ".join(str(exc).split())
        raise CorruptDataError(
            f"archive {path} is corrupt or truncated ({type(exc).__name__}: {reason}); download or copy it "
            "again (compare its SHA-256 with the one published beside it)") from exc
    if not items:
        raise DataNotFoundError(f"{path} has no images under */{split}/<class>/")
    _check_same_classes(classes, path)
    return _assemble(items, path)
