"""Downloading a dataset's canonical archives into the data root, without torchvision (``urllib``
only), when :mod:`stitchkit.data.archives` finds no source and a download is asked for
(:func:`download_requested`: ``load(..., download=True)`` or ``$STITCHKIT_DOWNLOAD``).

CIFAR-10's ``cifar-10-python.tar.gz`` is kept and extracted to ``cifar-10-batches-py/``; MNIST's
four IDX ``.gz`` files go to ``MNIST/raw/`` (``train-images`` last: its presence makes the folder
a source). Each file is written atomically (a temporary file in the same folder, then a rename),
checked against its announced length and its published MD5 (:data:`CHECKSUMS`; a mismatch is
deleted and raises :class:`~stitchkit.data.integrity.CorruptDataError`), and fetched from the first of
:data:`MIRRORS` that serves it, or of the base URLs in ``$STITCHKIT_DATA_MIRROR``, which replace
them. A file already in place with the right checksum is not fetched again; when every mirror
fails, :class:`~stitchkit.data.integrity.DataNotFoundError` names each URL with its reason and the
offline way (a copy, and ``STITCHKIT_DATA_ROOT``).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import warnings
import zlib
from pathlib import Path

from ..base import paths
from ..base.environment import DOWNLOAD_ENV, MIRROR_ENV
from ..base.progress import progress_bar, say
from .integrity import CorruptDataError, DataNotFoundError

# Base URLs that publish each dataset's canonical files, tried in order ($STITCHKIT_DATA_MIRROR
# replaces them): CIFAR-10 from its authors; MNIST from the copy PyTorch's own datasets use, then
# from the original site.
MIRRORS: dict[str, tuple[str, ...]] = {
    "cifar10": ("https://www.cs.toronto.edu/~kriz/",),
    "mnist": ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"),
}

# The canonical files and their published MD5 checksums: the values torchvision checks
# (torchvision/datasets/cifar.py, CIFAR10.tgz_md5; torchvision/datasets/mnist.py, MNIST.resources),
# CIFAR-10's also published on https://www.cs.toronto.edu/~kriz/cifar.html. MNIST's are listed in
# download order: train-images last, since its presence is what makes the folder a source.
CHECKSUMS: dict[str, dict[str, str]] = {
    "cifar10": {"cifar-10-python.tar.gz": "c58f30108f718f92721af3b95e74349a"},
    "mnist": {
        "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
        "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
        "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
        "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    },
}

DOWNLOAD_TIMEOUT = 60.0  # seconds without a byte from the server before a mirror counts as failed
_CIFAR_FILES = tuple(f"data_batch_{i}" for i in range(1, 6)) + ("test_batch",)
# What a failing server or network raises (URLError covers HTTPError and refused connections).
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


class _Interrupted(Exception):
    """A download that ended before the length its server announced."""


def download_requested(download: bool | None = None) -> bool:
    """``download`` if given, else whether ``$STITCHKIT_DOWNLOAD`` says yes (1/true/yes/on; unset,
    0/false/no/off: no; anything else is an error naming it): the one place the switch is read."""
    if download is not None:
        return bool(download)
    value = os.environ.get(DOWNLOAD_ENV, "").strip().lower()
    if value not in ("", "0", "1", "false", "true", "no", "yes", "off", "on"):
        raise ValueError(f"{DOWNLOAD_ENV}={value!r} is invalid; valid: 1/true/yes/on (download a missing dataset), "
                         "0/false/no/off or unset (do not)")
    return value in ("1", "true", "yes", "on")


def mirrors(name: str) -> tuple[str, ...]:
    """The base URLs ``name``'s files are fetched from, in order: ``$STITCHKIT_DATA_MIRROR`` (one
    or more, separated by spaces or commas) when set, else :data:`MIRRORS`."""
    env = os.environ.get(MIRROR_ENV, "").replace(",", " ").split()
    return tuple(env) if env else MIRRORS[name]


def download_canonical(name: str, root: str | os.PathLike | None = None) -> Path:
    """Fetch ``name``'s canonical archives into the data root (see the module docstring) and return
    the folder the loader then finds: ``cifar-10-batches-py/`` or ``MNIST/raw/``."""
    base = paths.data_root(root)
    if name == "cifar10":
        (tarball, md5), = CHECKSUMS[name].items()
        _fetch(name, tarball, md5, base / tarball)
        return _extract_cifar(base / tarball, base / "cifar-10-batches-py")
    folder = base / "MNIST" / "raw"
    for file, md5 in CHECKSUMS[name].items():
        _fetch(name, file, md5, folder / file)
    return folder


def _md5(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "md5").hexdigest()


def _fetch(name: str, file: str, md5: str, dest: Path) -> None:
    """``dest`` holding ``file`` with checksum ``md5``: kept if already there, else downloaded from
    the first mirror that serves it. Raises :class:`DataNotFoundError` naming every URL tried when
    none does, :class:`CorruptDataError` when a download does not match ``md5``."""
    if dest.is_file():
        got = _md5(dest)
        if got == md5:
            return
        warnings.warn(f"{dest} has MD5 {got}, not the published {md5}; downloading it again", stacklevel=3)
    failures = []
    for base_url in mirrors(name):
        url = base_url.rstrip("/") + "/" + file
        try:
            _download(url, dest, md5)
            return
        except _NETWORK_ERRORS + (_Interrupted,) as exc:
            failures.append(f"{url}: {_why(exc)}")
    files = list(CHECKSUMS[name])
    fetch = (f"{MIRRORS[name][0]}{files[0]}" if len(files) == 1
             else f"{', '.join(files)} from {MIRRORS[name][0]}")
    unpack = " and extract it there (it holds cifar-10-batches-py/)" if name == "cifar10" else ""
    raise DataNotFoundError(
        f"could not download {file} for {name}; tried:\n  - " + "\n  - ".join(failures) + "\n"
        f"Without a network here: on a machine that has one, fetch {fetch} (published MD5s in "
        f"stitchkit.data.archives.CHECKSUMS), copy {'it' if len(files) == 1 else 'them'} to a folder here{unpack}, and set "
        f"STITCHKIT_DATA_ROOT to that folder (any form of {name} the loader accepts will do); or set {MIRROR_ENV} "
        "to a mirror you can reach.")


def _why(exc: BaseException) -> str:
    """A network failure in a few words (``HTTP 404 Not Found``, ``[Errno 111] Connection refused``)."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    if isinstance(exc, _Interrupted):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _download(url: str, dest: Path, md5: str) -> None:
    """Stream ``url`` into a temporary file beside ``dest``, check its MD5, then rename it to
    ``dest``: an interrupted or corrupt download never appears under ``dest`` (the temporary file
    is deleted). Network failures propagate for :func:`_fetch` to try the next mirror."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write the download of {url} to {dest.parent} ({exc.strerror or exc}); "
                      "set STITCHKIT_DATA_ROOT to a folder you can write", str(dest)) from exc
    try:
        out = os.fdopen(fd, "wb")
        mask = os.umask(0o022)
        os.umask(mask)
        os.fchmod(out.fileno(), 0o666 & ~mask)  # mkstemp's 0600 would keep other users of a shared data root out
        digest = hashlib.md5(usedforsecurity=False)
        say(f"downloading {url} to {dest}")
        with out, urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.strip().isdigit() else None
            got = 0
            with progress_bar(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=dest.name) as bar:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
                    digest.update(chunk)
                    got += len(chunk)
                    bar.update(len(chunk))
            if total is not None and got != total:
                raise _Interrupted(f"the download stopped after {got:,} of {total:,} bytes")
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != md5:
            raise CorruptDataError(
                f"the download of {dest.name} from {url} has MD5 {digest.hexdigest()}, but its published checksum "
                f"is {md5}: the file is corrupt or not the canonical one, and was deleted. Try again later, or "
                f"fetch {dest.name} elsewhere and put it at {dest}")
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _extract_cifar(tarball: Path, folder: Path) -> Path:
    """Extract the CIFAR-10 python tarball's ``cifar-10-batches-py/`` to ``folder``: into a
    temporary folder beside it, then renamed, so an interrupted extraction never leaves a
    half-filled ``folder``."""
    if (folder / "data_batch_1").is_file():
        return folder
    if folder.exists():
        raise DataNotFoundError(f"{folder} exists but has no data_batch_1, so the downloaded {tarball} was not "
                                f"extracted over it: move {folder} away and load again")
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        try:
            with tarfile.open(tarball, "r:gz") as tar:
                for member in tar:
                    parts = Path(member.name).parts
                    if member.isfile() and len(parts) == 2 and parts[0] == folder.name and not parts[1].startswith("."):
                        (tmp / parts[1]).write_bytes(tar.extractfile(member).read())
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise CorruptDataError(f"{tarball} is corrupt or truncated ({type(exc).__name__}: {exc}); delete it "
                                   "and load again to download it afresh") from exc
        missing = [f for f in _CIFAR_FILES if not (tmp / f).is_file()]
        if missing:
            raise CorruptDataError(f"{tarball} has no {folder.name}/{missing[0]}: it is not the CIFAR-10 python "
                                   "archive; delete it and load again to download it afresh")
        try:
            tmp.rename(folder)
        except OSError:
            if not (folder / "data_batch_1").is_file():  # else another process extracted it meanwhile
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
