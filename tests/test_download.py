"""Issue 67: the canonical CIFAR-10 and MNIST archives downloaded on first use without torchvision
(checked against their MD5, written atomically), tested offline against a local HTTP server
serving small archives of the canonical formats; and the decoded-dataset cache under the user's
cache folder outside the checkout."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import write_cifar_pickles, write_mnist_idx

from stitchkit.base import environment, paths, progress
from stitchkit.data import archives, downloads, integrity


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the mirror's folder, counts the requests, and cuts short the files named in
    ``server.truncate`` (the announced length, half of the bytes, then the connection closes)."""

    def do_GET(self):  # noqa: N802 - http.server's name
        self.server.requests.append(self.path)
        name = self.path.lstrip("/")
        if name in self.server.truncate:
            body = (Path(self.directory) / name).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):  # quiet
        pass


class Mirror:
    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        handler = functools.partial(_Handler, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.requests, self.server.truncate = [], set()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def requests(self) -> list[str]:
        return self.server.requests

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """A local server publishing a small cifar-10-python.tar.gz (five training batches of 10 images,
    a test batch of 20) and the four MNIST IDX .gz files (20 + 10 images); the mirror variable points
    at it and the checksum table holds the small files' MD5s."""
    src = tmp_path / "src"
    imgs, labs = write_cifar_pickles(src)
    m = Mirror(tmp_path / "served")
    with tarfile.open(m.folder / "cifar-10-python.tar.gz", "w:gz") as tar:
        tar.add(src / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    mnist_imgs, mnist_labs = write_mnist_idx(m.folder)
    monkeypatch.setitem(downloads.CHECKSUMS, "cifar10",
                        {"cifar-10-python.tar.gz": _md5(m.folder / "cifar-10-python.tar.gz")})
    monkeypatch.setitem(downloads.CHECKSUMS, "mnist",
                        {f: _md5(m.folder / f) for f in downloads.CHECKSUMS["mnist"]})
    monkeypatch.setenv(environment.MIRROR_ENV, m.url)
    monkeypatch.delenv(environment.DOWNLOAD_ENV, raising=False)
    m.cifar, m.mnist = (imgs, labs), (mnist_imgs, mnist_labs)
    yield m
    m.close()


def _leftovers(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.name.endswith(".tmp"))


def test_the_published_checksums_are_torchvisions():
    assert downloads.CHECKSUMS["cifar10"] == {"cifar-10-python.tar.gz": "c58f30108f718f92721af3b95e74349a"}
    assert downloads.CHECKSUMS["mnist"] == {
        "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
        "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
        "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
        "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    }
    assert list(downloads.CHECKSUMS["mnist"])[-1].startswith("train-images")  # what makes the folder a source: last
    assert downloads.MIRRORS["mnist"][0] == "https://ossci-datasets.s3.amazonaws.com/mnist/"


def test_cifar10_downloads_on_first_use_and_not_again(mirror, tmp_path):
    root = tmp_path / "root"
    imgs, labs = mirror.cifar
    train = archives.load("cifar10", "train", root, download=True)
    assert mirror.requests == ["/cifar-10-python.tar.gz"]
    assert train.images.shape == (50, 3, 32, 32) and np.array_equal(train.images.numpy(), imgs[:50])
    assert train.labels.tolist() == labs[:50].tolist() and train.classes[0] == "airplane"
    assert (root / "cifar-10-python.tar.gz").is_file() and (root / "cifar-10-batches-py" / "test_batch").is_file()
    assert _leftovers(root) == []
    archives._LOADED.clear()
    test = archives.load("cifar10", "test", root, download=True)
    train_again = archives.load("cifar10", "train", root, download=True)
    assert test.labels.tolist() == labs[50:].tolist() and np.array_equal(train_again.images, train.images)
    assert mirror.requests == ["/cifar-10-python.tar.gz"]  # found in place: not downloaded again
    # the extracted folder gone, the tarball kept (its checksum right): extracted again, not downloaded
    shutil.rmtree(root / "cifar-10-batches-py")
    archives._LOADED.clear()
    assert len(archives.load("cifar10", "test", root, download=True)) == 20
    assert mirror.requests == ["/cifar-10-python.tar.gz"]


def test_the_environment_switch_downloads_mnist_for_every_loader(mirror, tmp_path, monkeypatch):
    """``STITCHKIT_DOWNLOAD=1``: the loaders that never pass ``download`` (the registry's, what
    ``stitchkit run`` and ``stitchkit compare`` reach) and the batch's pre-flight check download."""
    from stitchkit.data import datasets

    root = tmp_path / "root"
    monkeypatch.setenv(environment.DOWNLOAD_ENV, "1")
    imgs, labs = mirror.mnist
    assert archives.locate("mnist", root) == root / "MNIST" / "raw"
    assert sorted(mirror.requests) == sorted(f"/{f}" for f in downloads.CHECKSUMS["mnist"])
    assert mirror.requests[-1] == "/train-images-idx3-ubyte.gz"
    split = datasets.base_split("mnist", "train", root)
    assert split.images.shape == (20, 1, 28, 28) and np.array_equal(split.images.numpy(), imgs[:20])
    assert archives.load("mnist", "test", root).labels.tolist() == labs[20:].tolist()
    assert len(mirror.requests) == 4  # not again


def test_no_download_unless_asked(mirror, tmp_path, monkeypatch):
    root = tmp_path / "root"
    with pytest.raises(integrity.DataNotFoundError) as err:
        archives.load("mnist", "train", root)
    assert f"{environment.DOWNLOAD_ENV}=1" in str(err.value) and "download=True" in str(err.value)
    assert "torchvision" not in str(err.value)
    monkeypatch.setenv(environment.DOWNLOAD_ENV, "1")
    with pytest.raises(integrity.DataNotFoundError):
        archives.load("cifar10", "train", root, download=False)  # an explicit False wins
    assert mirror.requests == [] and not root.exists()
    monkeypatch.setenv(environment.DOWNLOAD_ENV, "sure")
    with pytest.raises(ValueError, match=f"{environment.DOWNLOAD_ENV}='sure' is invalid"):
        archives.load("cifar10", "train", root)


def test_a_corrupt_download_is_refused_and_deleted(mirror, tmp_path):
    root = tmp_path / "root"
    served = mirror.folder / "cifar-10-python.tar.gz"
    expected = downloads.CHECKSUMS["cifar10"]["cifar-10-python.tar.gz"]
    blob = bytearray(served.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    served.write_bytes(bytes(blob))
    with pytest.raises(integrity.CorruptDataError) as err:
        archives.load("cifar10", "train", root, download=True)
    msg = str(err.value)
    assert "cifar-10-python.tar.gz" in msg and expected in msg and hashlib.md5(blob).hexdigest() in msg
    assert f"{mirror.url}cifar-10-python.tar.gz" in msg and "deleted" in msg
    assert not (root / "cifar-10-python.tar.gz").exists() and not (root / "cifar-10-batches-py").exists()
    assert _leftovers(root) == []


def test_a_file_in_place_with_a_wrong_checksum_is_downloaded_again(mirror, tmp_path):
    raw = tmp_path / "root" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    (raw / "t10k-images-idx3-ubyte.gz").write_bytes(b"not the file")
    with pytest.warns(UserWarning, match="t10k-images-idx3-ubyte.gz has MD5 .* downloading it again"):
        assert len(archives.load("mnist", "test", tmp_path / "root", download=True)) == 10
    assert _md5(raw / "t10k-images-idx3-ubyte.gz") == downloads.CHECKSUMS["mnist"]["t10k-images-idx3-ubyte.gz"]


def test_an_unreachable_server_names_the_url_and_the_offline_way(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/"
    monkeypatch.setenv(environment.MIRROR_ENV, url)
    root = tmp_path / "root"
    with pytest.raises(integrity.DataNotFoundError) as err:
        archives.load("cifar10", "train", root, download=True)
    msg = str(err.value)
    assert f"{url}cifar-10-python.tar.gz" in msg and "STITCHKIT_DATA_ROOT" in msg
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz" in msg  # where to fetch it elsewhere
    assert not (root / "cifar-10-python.tar.gz").exists() and _leftovers(root) == []


def test_the_next_mirror_serves_what_the_first_does_not(mirror, tmp_path, monkeypatch):
    empty = Mirror(tmp_path / "empty")  # answers 404
    try:
        monkeypatch.setenv(environment.MIRROR_ENV, f"{empty.url}, {mirror.url}")
        assert len(archives.load("cifar10", "test", tmp_path / "root", download=True)) == 20
        assert empty.requests == ["/cifar-10-python.tar.gz"] and mirror.requests == ["/cifar-10-python.tar.gz"]
    finally:
        empty.close()


def test_an_interrupted_download_leaves_no_partial_file(mirror, tmp_path, monkeypatch):
    root = tmp_path / "root"
    final = root / "cifar-10-python.tar.gz"
    mirror.server.truncate.add("cifar-10-python.tar.gz")
    with pytest.raises(integrity.DataNotFoundError, match="stopped after [0-9,]+ of [0-9,]+ bytes"):
        archives.load("cifar10", "train", root, download=True)
    assert not final.exists() and _leftovers(root) == []

    class Stop:  # Ctrl-C in the middle of the transfer
        def __init__(self, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            raise KeyboardInterrupt

    mirror.server.truncate.clear()
    bar = progress.progress_bar
    monkeypatch.setattr(downloads, "progress_bar", Stop)
    with pytest.raises(KeyboardInterrupt):
        archives.load("cifar10", "train", root, download=True)
    assert not final.exists() and _leftovers(root) == []
    monkeypatch.setattr(downloads, "progress_bar", bar)  # the next load downloads cleanly
    assert len(archives.load("cifar10", "train", root, download=True)) == 50
    assert final.is_file() and _leftovers(root) == []


# ---- the decoded-dataset cache's default place


def test_the_user_cache_folder_per_platform(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(paths.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.user_cache_dir() == tmp_path / "xdg" / "stitchkit"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: only an absolute path counts
    assert paths.user_cache_dir() == tmp_path / "home" / ".cache" / "stitchkit"
    monkeypatch.setattr(paths.sys, "platform", "darwin")
    assert paths.user_cache_dir() == tmp_path / "home" / "Library" / "Caches" / "stitchkit"
    monkeypatch.setattr(paths.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert paths.user_cache_dir() == tmp_path / "local" / "stitchkit" / "Cache"


def test_the_checkout_is_recognised(tmp_path):
    assert paths.is_checkout(paths.REPO_ROOT) and paths.IN_CHECKOUT  # the tests run in the checkout
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    assert not paths.is_checkout(tmp_path) and not paths.is_checkout(tmp_path / "missing")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "stitchkit"\n')
    assert paths.is_checkout(tmp_path)


def test_the_default_cache_root_inside_and_outside_the_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv(paths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(paths.sys, "platform", "linux")
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path / "checkout")
    monkeypatch.setattr(paths, "IN_CHECKOUT", True)
    assert paths.cache_root() == tmp_path / "checkout" / "data" / "cache" and paths.cache_origin() == "checkout"
    monkeypatch.setattr(paths, "IN_CHECKOUT", False)
    for data_root in (None, str(tmp_path / "elsewhere")):  # the data root says nothing about the cache
        if data_root:
            monkeypatch.setenv("STITCHKIT_DATA_ROOT", data_root)
        assert paths.cache_root() == tmp_path / "xdg" / "stitchkit" and paths.cache_origin() == "user"
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "mine"))
    assert paths.cache_root() == tmp_path / "mine" and paths.cache_origin() == "env"


def test_a_plain_install_outside_the_checkout_caches_in_the_user_folder(tmp_path):
    """The package imported from another folder than a checkout (a plain install), run in a folder
    of the user's: the cache goes to the user's cache folder, nothing to ./data/cache."""
    site, work = tmp_path / "site", tmp_path / "work"
    shutil.copytree(paths.PACKAGE_DIR, site / "stitchkit", ignore=shutil.ignore_patterns("__pycache__"))
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in (paths.CACHE_ENV, "STITCHKIT_DATA_ROOT")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))
    code = "from stitchkit.base import paths; print(paths.IN_CHECKOUT, paths.cache_root(), paths.data_root())"
    out = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", str(tmp_path / "xdg" / "stitchkit"), str(work / "data")]
    assert not (work / "data").exists()


def test_the_first_decoded_cache_write_is_announced_once(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(paths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(paths.sys, "platform", "linux")
    monkeypatch.setattr(paths, "IN_CHECKOUT", False)
    monkeypatch.setattr(archives, "_ANNOUNCED", [])
    write_cifar_pickles(tmp_path / "root")
    archives.load("cifar10", "train", tmp_path / "root")
    archives.load("cifar10", "test", tmp_path / "root")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    folder = tmp_path / "xdg" / "stitchkit" / "datasets"
    assert len(lines) == 1 and lines[0].startswith(f"stitchkit: writing decoded datasets to {folder}, the user cache "
                                                   "folder (this first one, cifar10-train-"), lines
    assert "set STITCHKIT_CACHE to another folder" in lines[0]
    assert len(list(folder.glob("cifar10-*.npz"))) == 2
    # a cache the user chose is not announced
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "mine"))
    monkeypatch.setattr(archives, "_ANNOUNCED", [])
    archives._LOADED.clear()
    archives.load("cifar10", "test", tmp_path / "root")
    assert capsys.readouterr().err.strip() == ""
