"""Datasets as one uint8 image tensor plus int64 labels, and a device-resident batch iterator.

A split is held whole: ``images`` is ``(N, C, H, W)`` uint8 and ``labels`` is ``(N,)`` int64.
Sources, searched in the data root in this order:

- canonical formats: ``cifar-10-batches-py/`` pickles; MNIST IDX files (optionally ``.gz``,
  also under ``MNIST/raw/``);
- an image-folder tree ``<name>/<split>/<class>/<file>``, or a ``.tar.gz`` of one such as
  ``cifar10-images.tar.gz`` (class folders sort into label order);
- a torchvision download, only when torchvision imports and ``download=True``.

Whatever the source, it is decoded once into a cache file (``<cache>/datasets``) keyed by the
source's path, size and mtime.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pickle
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch

from . import paths
from .fileio import atomic_write_bytes

DATASETS = ("cifar10", "mnist")
SPLITS = ("train", "test")

# Per-recipe input normalisation (mean, std per channel, on the [0, 1] scale); None = inputs in [0, 1].
NORMALISATION: dict[str, tuple[tuple[float, ...], tuple[float, ...]] | None] = {
    "cifar": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),  # Bansal, Hernandez
    "half": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),  # Smith & Marcu, colour sets
    "mnist": ((0.1307,), (0.3081,)),  # Smith & Marcu, greyscale
    "none": None,  # Balogh & Jelasity
}

# Bansal et al.'s coarse task: animals (bird, cat, deer, dog, frog, horse) vs objects. The
# catalogue lists cat, dog, frog, horse, deer = 0 and the rest = 1; we follow the catalogue.
OBJECTS_VS_ANIMALS = {0: 1, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 1, 9: 1}


class DataNotFoundError(FileNotFoundError):
    """Raised when no source of a dataset exists; the message lists where we looked."""


@dataclass(frozen=True)
class Split:
    """One split of a dataset held as tensors: images (N, C, H, W) uint8, labels (N,) int64."""

    images: torch.Tensor
    labels: torch.Tensor
    classes: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.images.dtype != torch.uint8 or self.images.ndim != 4:
            raise ValueError(f"images must be (N, C, H, W) uint8, got {tuple(self.images.shape)} {self.images.dtype}")
        if self.labels.shape != (self.images.shape[0],):
            raise ValueError(f"labels must be ({self.images.shape[0]},), got {tuple(self.labels.shape)}")

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def subset(self, index: torch.Tensor | Sequence[int]) -> "Split":
        index = torch.as_tensor(index, dtype=torch.long)
        return Split(self.images[index], self.labels[index], self.classes)

    def with_labels(self, labels: torch.Tensor, classes: Sequence[str] | None = None) -> "Split":
        return Split(self.images, labels.to(torch.int64), tuple(classes) if classes else self.classes)

    def to(self, device: torch.device | str) -> "Split":
        return Split(self.images.to(device), self.labels.to(device), self.classes)


# --------------------------------------------------------------------------------------------
# Loading


def load(name: str, split: str = "train", root: str | os.PathLike | None = None, download: bool = False) -> Split:
    """Load ``name`` ('cifar10' | 'mnist'), ``split`` ('train' | 'test') as a :class:`Split`.

    ``root`` defaults to ``$STITCHKIT_DATA_ROOT`` or ``<repo>/data``. Raises
    :class:`DataNotFoundError` listing every place searched when no source exists.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    base = paths.data_root(root)
    source, looked = _find_source(name, base)
    if source is None and download:
        source = _torchvision_download(name, base)
    if source is None:
        hint = (
            f"Provide {name} in one of these forms, or set STITCHKIT_DATA_ROOT to a folder that has it "
            f"(`make` uses ../shared/data when it exists); with a network and torchvision, load(..., download=True)."
        )
        raise DataNotFoundError(f"dataset {name!r} not found under {base}. Looked for:\n  - "
                                + "\n  - ".join(str(p) for p in looked) + "\n" + hint)
    kind, path = source
    cache_file = _cache_file(name, split, path)
    if cache_file in _LOADED:
        return _LOADED[cache_file]
    data = None
    if cache_file.exists():
        try:
            data = _read_cache(cache_file)
        except Exception:  # corrupt cache: decode again
            cache_file.unlink(missing_ok=True)
    if data is None:
        decoder = {"cifar_pickle": _decode_cifar_pickles, "mnist_idx": _decode_mnist_idx,
                   "folder": _decode_folder, "tar": _decode_tar}[kind]
        data = decoder(path, split)
        _write_cache(cache_file, data)
    _LOADED[cache_file] = data
    return data


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


def _torchvision_download(name: str, base: Path) -> tuple[str, Path] | None:
    try:
        import torchvision  # noqa: F401  (optional: fails next to the CPU torch build)
        from torchvision import datasets
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise DataNotFoundError(f"download=True needs torchvision, which did not import: {exc}") from exc
    base.mkdir(parents=True, exist_ok=True)
    if name == "cifar10":
        datasets.CIFAR10(str(base), train=True, download=True)
        datasets.CIFAR10(str(base), train=False, download=True)
        return "cifar_pickle", base / "cifar-10-batches-py"
    datasets.MNIST(str(base), train=True, download=True)
    datasets.MNIST(str(base), train=False, download=True)
    return "mnist_idx", base / "MNIST" / "raw"


# ---- cache of decoded splits


def _cache_file(name: str, split: str, source: Path) -> Path:
    st = source.stat()
    tag = hashlib.sha256(f"{source.resolve()}|{st.st_size}|{int(st.st_mtime)}".encode()).hexdigest()[:16]
    return paths.cache_root() / "datasets" / f"{name}-{split}-{tag}.npz"


def _write_cache(path: Path, data: Split) -> None:
    buf = io.BytesIO()
    np.savez(buf, images=data.images.numpy(), labels=data.labels.numpy(), classes=np.array(data.classes))
    atomic_write_bytes(path, buf.getvalue())


def _read_cache(path: Path) -> Split:
    with np.load(path, allow_pickle=False) as z:
        return Split(torch.from_numpy(z["images"].copy()), torch.from_numpy(z["labels"].copy()),
                     tuple(str(c) for c in z["classes"]))


# ---- decoders

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def _decode_cifar_pickles(path: Path, split: str) -> Split:
    files = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    images, labels = [], []
    for f in files:
        with open(path / f, "rb") as fh:
            d = pickle.load(fh, encoding="bytes")
        images.append(np.asarray(d[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
        labels.append(np.asarray(d[b"labels"], dtype=np.int64))
    return Split(torch.from_numpy(np.concatenate(images)), torch.from_numpy(np.concatenate(labels)), CIFAR10_CLASSES)


def _idx_file(folder: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx")):
        if (folder / name).is_file():
            return folder / name
    return None


def read_idx(path: Path) -> np.ndarray:
    """Read an IDX file (optionally gzipped): big-endian header, then unsigned bytes."""
    raw = (gzip.open if str(path).endswith(".gz") else open)(path, "rb").read()
    if raw[:2] != b"\x00\x00" or raw[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _decode_mnist_idx(path: Path, split: str) -> Split:
    prefix = "train" if split == "train" else "t10k"
    img_file, lab_file = _idx_file(path, f"{prefix}-images-idx3-ubyte"), _idx_file(path, f"{prefix}-labels-idx1-ubyte")
    if img_file is None or lab_file is None:
        raise DataNotFoundError(f"MNIST IDX files for split {split!r} missing in {path}")
    images = read_idx(img_file)[:, None].copy()  # (N, 1, 28, 28)
    labels = read_idx(lab_file).astype(np.int64)
    return Split(torch.from_numpy(images), torch.from_numpy(labels), tuple(str(i) for i in range(10)))


def _decode_image(data: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        arr = np.asarray(im.convert("L") if im.mode in ("L", "1", "P", "I") else im.convert("RGB"))
    return arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1)  # (C, H, W)


def _assemble(items: list[tuple[str, str, bytes]]) -> Split:
    """items: (class name, file name, encoded bytes); labels follow sorted class names."""
    if not items:
        raise DataNotFoundError("image folder is empty")
    classes = tuple(sorted({c for c, _, _ in items}))
    index = {c: i for i, c in enumerate(classes)}
    items.sort(key=lambda t: (index[t[0]], t[1]))
    images = np.stack([_decode_image(b) for _, _, b in items])
    labels = np.array([index[c] for c, _, _ in items], dtype=np.int64)
    return Split(torch.from_numpy(images), torch.from_numpy(labels), classes)


def _decode_folder(path: Path, split: str) -> Split:
    folder = path / split
    if not folder.is_dir():
        raise DataNotFoundError(f"{folder} does not exist (expected <root>/{split}/<class>/<image>)")
    items = [(f.parent.name, f.name, f.read_bytes())
             for f in sorted(folder.glob("*/*")) if f.is_file()]
    return _assemble(items)


def _decode_tar(path: Path, split: str) -> Split:
    items = []
    with tarfile.open(path, "r:*") as tar:
        for member in tar:
            parts = Path(member.name).parts
            # accept <top>/<split>/<class>/<file> and <split>/<class>/<file>
            if not member.isfile() or len(parts) < 3 or parts[-3] != split or parts[-1].startswith("."):
                continue
            items.append((parts[-2], parts[-1], tar.extractfile(member).read()))
    if not items:
        raise DataNotFoundError(f"{path} has no images under */{split}/<class>/")
    return _assemble(items)


# --------------------------------------------------------------------------------------------
# Subsets and label transforms


def stratified_subset(labels: torch.Tensor, n: int, seed: int = 0) -> torch.Tensor:
    """Indices of a seeded subset of size ``n`` with classes as equal as possible (sorted)."""
    labels = labels.cpu()
    total = labels.numel()
    if not 0 < n <= total:
        raise ValueError(f"subset size must be in 1..{total}, got {n}")
    if n == total:
        return torch.arange(total)
    g = torch.Generator().manual_seed(seed)
    classes = labels.unique()
    per_class = [torch.nonzero(labels == c).flatten() for c in classes]
    per_class = [idx[torch.randperm(idx.numel(), generator=g)] for idx in per_class]
    quota = [n // len(classes)] * len(classes)
    for i in torch.randperm(len(classes), generator=g)[: n - sum(quota)].tolist():
        quota[i] += 1
    chosen = torch.cat([idx[:q] for idx, q in zip(per_class, quota)])
    return chosen.sort().values


def remap_labels(labels: torch.Tensor, mapping: dict[int, int]) -> torch.Tensor:
    """Map each label through ``mapping`` (every label present must be a key)."""
    missing = sorted(set(labels.unique().tolist()) - set(mapping))
    if missing:
        raise ValueError(f"labels {missing} have no entry in the mapping (keys: {sorted(mapping)})")
    table = torch.zeros(max(mapping) + 1, dtype=torch.int64)
    for k, v in mapping.items():
        table[k] = v
    return table[labels]


def randomise_labels(labels: torch.Tensor, fraction: float, num_classes: int, seed: int = 0) -> torch.Tensor:
    """Replace a seeded ``fraction`` of labels by uniformly random classes (as in Zhang et al. 2017)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    g = torch.Generator().manual_seed(seed)
    out = labels.clone()
    k = int(round(fraction * labels.numel()))
    idx = torch.randperm(labels.numel(), generator=g)[:k]
    out[idx] = torch.randint(0, num_classes, (k,), generator=g)
    return out


# --------------------------------------------------------------------------------------------
# Device-resident batches with batch-level augmentation


def normalise(images: torch.Tensor, recipe: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """uint8 (B, C, H, W) -> float (B, C, H, W) scaled to [0, 1] and normalised per ``recipe``."""
    if recipe not in NORMALISATION:
        raise ValueError(f"unknown normalisation {recipe!r}; valid: {', '.join(NORMALISATION)}")
    x = images.to(dtype).div_(255.0)
    stats = NORMALISATION[recipe]
    if stats is None:
        return x
    mean, std = stats
    if len(mean) != x.shape[1]:
        raise ValueError(f"normalisation {recipe!r} has {len(mean)} channels, images have {x.shape[1]}")
    mean_t = torch.tensor(mean, dtype=dtype, device=x.device).view(1, -1, 1, 1)
    std_t = torch.tensor(std, dtype=dtype, device=x.device).view(1, -1, 1, 1)
    return x.sub_(mean_t).div_(std_t)


def random_crop_flip(images: torch.Tensor, generator: torch.Generator, pad: int = 4, flip: bool = True) -> torch.Tensor:
    """Per-image random crop (zero padding ``pad``) and horizontal flip, done on the whole batch.

    images: (B, C, H, W) any dtype; returns the same shape. Equivalent to torchvision's
    RandomCrop(H, padding=pad) + RandomHorizontalFlip applied image by image.
    """
    b, c, h, w = images.shape
    dev = images.device
    padded = torch.nn.functional.pad(images, (pad, pad, pad, pad))  # (B, C, H+2p, W+2p)
    oy = torch.randint(0, 2 * pad + 1, (b,), generator=generator).to(dev)
    ox = torch.randint(0, 2 * pad + 1, (b,), generator=generator).to(dev)
    rows = oy[:, None] + torch.arange(h, device=dev)[None]  # (B, H)
    cols = ox[:, None] + torch.arange(w, device=dev)[None]  # (B, W)
    if flip:
        mirror = (torch.rand(b, generator=generator) < 0.5).to(dev)
        cols = torch.where(mirror[:, None], cols.flip(1), cols)
    bi = torch.arange(b, device=dev)[:, None, None]
    out = padded.permute(0, 2, 3, 1)[bi, rows[:, :, None], cols[:, None, :]]  # (B, H, W, C)
    return out.permute(0, 3, 1, 2).contiguous()


def index_batches(n: int, batch_size: int, *, shuffle: bool, drop_last: bool, generator: torch.Generator,
                  device: torch.device | str = "cpu") -> Iterator[torch.Tensor]:
    """Index tensors of one epoch over ``n`` examples (a fresh permutation from ``generator``)."""
    order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
    order = order.to(device)
    count = n // batch_size if drop_last else -(-n // batch_size)
    for i in range(count):
        yield order[i * batch_size:(i + 1) * batch_size]


class Batches:
    """Iterate over a :class:`Split` held whole on ``device`` in (normalised float) batches.

    Each epoch draws a fresh permutation from ``generator`` (seeded: reproducible order and
    augmentation). ``augment`` applies random crop (pad 4) + horizontal flip per batch on the
    uint8 tensor before normalisation. Yields (x (B, C, H, W) float, y (B,) int64).
    """

    def __init__(self, split: Split, batch_size: int, *, normalisation: str, shuffle: bool = False,
                 augment: bool = False, drop_last: bool = False, seed: int = 0,
                 device: torch.device | str = "cpu", channels_last: bool = False) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if normalisation not in NORMALISATION:
            raise ValueError(f"unknown normalisation {normalisation!r}; valid: {', '.join(NORMALISATION)}")
        self.split = split.to(device)
        self.batch_size, self.normalisation = batch_size, normalisation
        self.shuffle, self.augment, self.drop_last = shuffle, augment, drop_last
        self.channels_last = channels_last
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        n = len(self.split)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for idx in index_batches(len(self.split), self.batch_size, shuffle=self.shuffle, drop_last=self.drop_last,
                                 generator=self.generator, device=self.split.images.device):
            x = self.split.images[idx]
            if self.augment:
                x = random_crop_flip(x, self.generator)
            x = normalise(x, self.normalisation)
            if self.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            yield x, self.split.labels[idx]
