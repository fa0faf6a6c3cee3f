"""Shared fixtures: an isolated cache per test session, synthetic datasets in every format."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

# Verdict tests read intervals on synthetic tables whose margins are many standard errors wide:
# 200 bootstrap resamples resolve them in a fifth of the time (an explicit setting wins).
os.environ.setdefault("STITCHKIT_RESAMPLES", "200")

from stitchkit.base import environment  # noqa: E402
from stitchkit.data import archives, splits  # noqa: E402

# Under pytest-xdist (`make check` and `make test` run two workers) each worker gets its share of the cores, and
# the notebooks it runs through papermill inherit the setting: two processes of one thread each
# beat two processes contending for every core. An explicit OMP_NUM_THREADS wins.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _cores // _WORKERS)))
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """The test session writes artifacts to its own cache, never to data/cache (decoded
    datasets are shared across tests: their keys include the source path). Parallel workers
    share one cache (the store's writes are atomic), so a model one notebook trains serves the
    next wherever it runs. The synthetic datasets below are tiny, so the session allows partial
    datasets (``STITCHKIT_ALLOW_PARTIAL_DATA=1``); tests of the size check unset it."""
    names = ("STITCHKIT_CACHE", environment.ALLOW_PARTIAL_ENV)
    before = {k: os.environ.get(k) for k in names}
    if os.environ.get("PYTEST_XDIST_WORKER"):  # basetemp is <run>/popen-gwN: the run's folder is shared
        shared = tmp_path_factory.getbasetemp().parent / "cache"
        shared.mkdir(exist_ok=True)
        os.environ["STITCHKIT_CACHE"] = str(shared)
    else:
        os.environ["STITCHKIT_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    os.environ[environment.ALLOW_PARTIAL_ENV] = "1"
    yield
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def compiled_book(tmp_path_factory) -> Path:
    """The book compiled once per test run (Jupyter Book, warnings as errors): the build test and
    the browser checks read the same HTML. Under pytest-xdist the workers share it: the first to
    ask compiles it under a lock in the run's folder, the others wait and read it (the ``browser``
    xdist group does not keep the parametrized browser checks on one worker, so without the lock
    both workers compiled it)."""
    import fcntl
    import shutil

    from stitchkit.base import paths
    from stitchkit.base.fileio import atomic_write_text
    from stitchkit.book import execution

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # basetemp is <run>/popen-gwN: the run's folder is shared
        root = root.parent
    done = root / "compiled-book.path"
    with open(root / "compiled-book.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            # a copy of the book: compiling writes its generated pages (scorecard, part pages, the table
            # of contents), which must not rewrite the working tree's committed ones
            copy = root / "book-copy"
            shutil.copytree(paths.BOOK_DIR, copy / "book")
            shutil.copytree(paths.REPO_ROOT / "benchmarks", copy / "benchmarks")
            for name in ("_config.yml", "_toc.yml"):
                shutil.copy(paths.REPO_ROOT / name, copy / name)
            html = execution.compile_book(root / "compiled-book", root=copy)
            atomic_write_text(done, str(html))
        return Path(done.read_text())


@pytest.fixture(autouse=True)
def _fresh_loaded_splits():
    archives._LOADED.clear()
    yield
    archives._LOADED.clear()


def synthetic(n: int = 40, channels: int = 3, size: int = 8, classes: int = 4, seed: int = 0):
    g = np.random.default_rng(seed)
    images = g.integers(0, 256, size=(n, channels, size, size), dtype=np.uint8)
    labels = np.arange(n) % classes
    return images, labels


def write_cifar_pickles(root: Path, n_train: int = 50, n_test: int = 20) -> tuple[np.ndarray, np.ndarray]:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    imgs, labs = synthetic(n_train + n_test, 3, 32, 10)
    per = n_train // 5
    for i in range(5):
        sl = slice(i * per, (i + 1) * per)
        with open(folder / f"data_batch_{i + 1}", "wb") as fh:
            pickle.dump({b"data": imgs[sl].reshape(per, -1), b"labels": labs[sl].tolist()}, fh)
    with open(folder / "test_batch", "wb") as fh:
        pickle.dump({b"data": imgs[n_train:].reshape(n_test, -1), b"labels": labs[n_train:].tolist()}, fh)
    return imgs, labs


def _idx_bytes(arr: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return header + arr.astype(np.uint8).tobytes()


def write_mnist_idx(root: Path, gz: bool = True) -> tuple[np.ndarray, np.ndarray]:
    root.mkdir(parents=True, exist_ok=True)
    imgs, labs = synthetic(30, 1, 28, 10, seed=1)
    opener = gzip.open if gz else open
    ext = ".gz" if gz else ""
    for prefix, sl in (("train", slice(0, 20)), ("t10k", slice(20, 30))):
        with opener(root / f"{prefix}-images-idx3-ubyte{ext}", "wb") as fh:
            fh.write(_idx_bytes(imgs[sl, 0]))
        with opener(root / f"{prefix}-labels-idx1-ubyte{ext}", "wb") as fh:
            fh.write(_idx_bytes(labs[sl]))
    return imgs, labs


def png_bytes(img_chw: np.ndarray) -> bytes:
    arr = img_chw[0] if img_chw.shape[0] == 1 else img_chw.transpose(1, 2, 0)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def write_image_tree(root: Path, name: str, classes=("cat", "ant", "dog"), per_class: int = 3, channels: int = 3):
    g = np.random.default_rng(2)
    expected = {}
    for split in ("train", "test"):
        for c in classes:
            (root / name / split / c).mkdir(parents=True)
            for i in range(per_class):
                img = g.integers(0, 256, size=(channels, 8, 8), dtype=np.uint8)
                (root / name / split / c / f"{i:04d}.png").write_bytes(png_bytes(img))
                expected[(split, c, i)] = img
    return expected


def tar_tree(src: Path, name: str, archive: Path) -> None:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src / name, arcname=name)


@pytest.fixture
def tiny_split():
    imgs, labs = synthetic(64, 3, 32, 10)
    return splits.Split(torch.from_numpy(imgs), torch.from_numpy(labs.astype(np.int64)), tuple("0123456789"))


def pytest_collection_modifyitems(config, items):
    """Longest first, so that two xdist workers finish together (pytest-xdist hands tests out in
    collection order, and a long notebook handed out last runs alone at the end): the tests of an
    xdist group (the book's build and browser checks, behind the compiled book), then the notebooks at smoke
    from the longest measured from an empty cache (``benchmarks/smoke_times.json``), then the
    pages across the papers (they read the four parts' networks: after those pages trained them
    they cost a fraction of their empty-cache time, and run together they would wait on each
    other's locks), then the other slow tests, then the rest, each in its own order."""
    from stitchkit.book.catalogue import smoke_times
    from stitchkit.registry.papers import paper_of

    seconds = {fid: float(t.get("seconds") or 0) for fid, t in smoke_times().items() if isinstance(t, dict)}

    def rank(item) -> tuple[int, float]:
        if item.get_closest_marker("xdist_group") is not None:
            return 0, 0.0
        if item.originalname == "test_notebook_runs_at_smoke":
            fid = item.callspec.params["figure_id"]
            beyond = getattr(paper_of(fid), "beyond", False)  # the pages across the papers
            return (2, 0.0) if beyond else (1, -seconds.get(fid, 0.0))
        return (3, 0.0) if item.get_closest_marker("slow") is not None else (4, 0.0)

    items.sort(key=rank)  # stable: ties keep the collection order
