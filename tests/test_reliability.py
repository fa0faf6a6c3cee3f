"""Bad inputs and faults: each fails with a message that names the problem, or is recovered from,
and nothing that had finished is lost.

Covered elsewhere, not repeated here: bad parameter values and unknown names through the CLI
(test_scales_cli.py), a corrupt or truncated store entry (test_store.py), a corrupt decoded-dataset
cache (test_data.py), a checkpoint-resumed run with an exception mid-epoch (test_train.py).
"""

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import torch
from conftest import tar_tree, write_cifar_pickles, write_image_tree

from stitchkit import cli
from stitchkit.base import environment, fileio
from stitchkit.base.store import Store, config_key
from stitchkit.book import execution, notebooks
from stitchkit.book import runs as runs_mod
from stitchkit.data import archives
from stitchkit.data import datasets, integrity, splits
from stitchkit.data.batches import Batches
from stitchkit.data.datasets import DataSpec
from stitchkit.networks.models import build_model
from stitchkit.networks.train import TrainConfig, read_checkpoint, train

TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models train fastest on one thread (and leave the other core free)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------
# Data: archives, folders, the official shape, fingerprints


@pytest.fixture
def archive(tmp_path):
    """A small image tree and its .tar.gz (as cifar10-images.tar.gz in its own data root)."""
    write_image_tree(tmp_path / "tree", "cifar10")
    (tmp_path / "root").mkdir()
    path = tmp_path / "root" / "cifar10-images.tar.gz"
    tar_tree(tmp_path / "tree", "cifar10", path)
    return path


@pytest.mark.parametrize("damage", ["garbage", "truncated", "tail cut"])
def test_damaged_archive_fails_naming_it_and_loads_once_restored(archive, damage):
    good = archive.read_bytes()
    archive.write_bytes({"garbage": b"not an archive" * 50, "truncated": good[: len(good) // 2],
                         "tail cut": good[:-4]}[damage])
    with pytest.raises(integrity.CorruptDataError) as err:
        archives.load("cifar10", "train", archive.parent)
    msg = str(err.value)
    assert str(archive) in msg and "corrupt or truncated" in msg and "again" in msg and "\n" not in msg
    archive.write_bytes(good)  # nothing half-decoded was cached: the good archive loads
    assert len(archives.load("cifar10", "train", archive.parent)) == 9


def test_undecodable_image_names_the_archive_member(tmp_path):
    write_image_tree(tmp_path / "tree", "cifar10")
    bad = tmp_path / "tree" / "cifar10" / "train" / "dog" / "0001.png"
    raw = bytearray(bad.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # inside the image data: PIL fails on it
    bad.write_bytes(bytes(raw))
    with pytest.raises(integrity.CorruptDataError, match="0001.png") as err:
        archives.load("cifar10", "train", tmp_path / "tree")
    assert str(bad) in str(err.value)
    (tmp_path / "root").mkdir()
    tar_tree(tmp_path / "tree", "cifar10", tmp_path / "root" / "cifar10-images.tar.gz")
    with pytest.raises(integrity.CorruptDataError) as err:
        archives.load("cifar10", "train", tmp_path / "root")
    assert "cifar10/train/dog/0001.png in " in str(err.value) and "cifar10-images.tar.gz" in str(err.value)


def test_missing_class_folder_is_refused_naming_the_folder_and_class(tmp_path):
    write_image_tree(tmp_path, "cifar10")
    shutil.rmtree(tmp_path / "cifar10" / "test" / "dog")
    for split in ("train", "test"):  # labels would shift: refused even with partial data allowed
        with pytest.raises(integrity.CorruptDataError, match="only in train: dog") as err:
            archives.load("cifar10", split, tmp_path)
        assert str(tmp_path / "cifar10") in str(err.value)


def test_split_sizes_must_match_the_official_release_unless_allowed(tmp_path, archive, monkeypatch):
    monkeypatch.delenv(environment.ALLOW_PARTIAL_ENV, raising=False)
    write_cifar_pickles(tmp_path / "pickles")  # 50 train images, 10 classes
    with pytest.raises(integrity.IncompleteDataError) as err:
        archives.load("cifar10", "train", tmp_path / "pickles")
    msg = str(err.value)
    assert "has 50 images" in msg and "50000" in msg and "cifar-10-batches-py" in msg
    assert environment.ALLOW_PARTIAL_ENV in msg and "allow_partial=True" in msg
    with pytest.raises(integrity.IncompleteDataError, match="in 3 classes") as err:  # class count: 3, not 10
        archives.load("cifar10", "test", archive.parent)
    assert str(archive) in str(err.value)
    assert len(archives.load("cifar10", "train", tmp_path / "pickles", allow_partial=True)) == 50
    monkeypatch.setenv(environment.ALLOW_PARTIAL_ENV, "yes")
    assert len(archives.load("cifar10", "test", archive.parent)) == 9


def test_fingerprint_follows_the_data_not_the_path(tmp_path, archive):
    write_image_tree(tmp_path / "a", "mnist", classes=("0", "1"), channels=1)
    shutil.copytree(tmp_path / "a", tmp_path / "same")
    write_image_tree(tmp_path / "b", "mnist", classes=("0", "1", "2"), channels=1)
    fa, fsame, fb = (archives.fingerprint("mnist", tmp_path / r) for r in ("a", "same", "b"))
    assert fa == fsame != fb and len(fa) == 64
    split = archives.load("mnist", "train", tmp_path / "a")
    assert split.fingerprint == fa and split.subset([0, 1]).fingerprint == fa
    assert datasets.fingerprint(DataSpec("mnist"), tmp_path / "a") == fa
    assert datasets.fingerprint(DataSpec("mnist", train_size=4), tmp_path / "b") == fb
    # an archive's fingerprint is its SHA-256, the value published beside the file
    assert archives.fingerprint("cifar10", archive.parent) == hashlib.sha256(archive.read_bytes()).hexdigest()
    # a file changed in place changes the fingerprint, and the split is decoded again
    img = tmp_path / "a" / "mnist" / "train" / "0" / "0000.png"
    img.write_bytes((tmp_path / "b" / "mnist" / "train" / "2" / "0000.png").read_bytes() + b"\0" * 7)
    archives._LOADED.clear()
    assert archives.load("mnist", "train", tmp_path / "a").fingerprint != fa


def test_data_fingerprint_salts_cache_keys(tmp_path):
    spec = {"model": "m"}
    assert config_key(spec) == config_key(spec, None)  # no salt: every existing key is unchanged
    assert config_key(spec, "a" * 64) != config_key(spec) != config_key(spec, "b" * 64)
    store = Store(tmp_path)
    store.put(spec, {"acc": 1.0}, {}, salt="a" * 64)
    assert store.get(spec, salt="a" * 64).metrics == {"acc": 1.0}
    assert store.get(spec, salt="a" * 64).salt == "a" * 64
    assert store.get(spec, salt="b" * 64) is None and store.get(spec) is None  # other data: retrain


# --------------------------------------------------------------------------------------------
# Training checkpoints

CFG = TrainConfig(epochs=3, batch_size=16, lr=0.05, precision="fp32", seed=0)


def _model_and_batches(split):
    model = build_model("resnet10", seed=0, width=4)
    return model, Batches(split, CFG.batch_size, normalisation="cifar", shuffle=True, augment=True,
                          drop_last=True, seed=CFG.seed)


def _weights_equal(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


@pytest.fixture(scope="module")
def reference():
    """An uninterrupted run on a synthetic split of 64 images, 16x16 (as conftest's tiny_split, smaller)."""
    from conftest import synthetic

    imgs, labs = synthetic(64, 3, 16, 10)
    split = splits.Split(torch.from_numpy(imgs), torch.from_numpy(labs.astype("int64")), tuple("0123456789"))
    model, batches = _model_and_batches(split)
    train(model, batches, CFG, device="cpu", progress=False)
    return split, model


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "garbage", "another model"])
def test_unusable_checkpoint_is_named_deleted_and_training_restarts(reference, tmp_path, damage):
    split, full = reference
    ckpt = tmp_path / "partial" / "key.pt"
    model, batches = _model_and_batches(split)
    train(model, batches, TrainConfig(**{**CFG.to_dict(), "epochs": 1}), device="cpu", checkpoint=ckpt,
          progress=False)  # a real one-epoch checkpoint, then damaged
    raw = ckpt.read_bytes()
    if damage == "truncated":
        ckpt.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped byte":
        ckpt.write_bytes(raw[:-100] + bytes([raw[-100] ^ 1]) + raw[-99:])
    elif damage == "garbage":
        ckpt.write_bytes(b"\0" * 1000)
    else:
        ckpt.unlink()
        other, other_batches = build_model("resnet10", seed=0, width=8), _model_and_batches(split)[1]
        train(other, other_batches, TrainConfig(**{**CFG.to_dict(), "epochs": 1}), device="cpu", checkpoint=ckpt,
              progress=False)
    model, batches = _model_and_batches(split)
    with pytest.warns(UserWarning, match="training from the start") as warned:
        history = train(model, batches, CFG, device="cpu", checkpoint=ckpt, progress=False)
    assert str(ckpt) in str(warned[0].message)
    assert [r["epoch"] for r in history] == [1, 2, 3]
    assert _weights_equal(model, full)  # exactly the uninterrupted result
    assert read_checkpoint(ckpt)["step"] == history[-1]["step"]  # a fresh, valid checkpoint


KILLED_TRAINING = textwrap.dedent("""
    import sys, time
    import torch
    sys.path.insert(0, {tests!r})
    from conftest import synthetic
    from stitchkit.data.batches import Batches
    from stitchkit.data.splits import Split
    from stitchkit.networks.models import build_model
    from stitchkit.networks.train import TrainConfig, train

    torch.set_num_threads({threads})
    imgs, labs = synthetic(64, 3, 16, 10)
    split = Split(torch.from_numpy(imgs), torch.from_numpy(labs.astype("int64")), tuple("0123456789"))
    cfg = TrainConfig(epochs=3, batch_size=16, lr=0.05, precision="fp32", seed=0)
    batches = Batches(split, 16, normalisation="cifar", shuffle=True, augment=True, drop_last=True, seed=0)

    class Slow:  # a pause per batch, so that the parent kills it in the middle of training
        generator = batches.generator
        def __len__(self):
            return len(batches)
        def __iter__(self):
            for xy in batches:
                time.sleep(0.15)
                yield xy

    train(build_model("resnet10", seed=0, width=4), Slow(), cfg, device="cpu", checkpoint={ckpt!r},
          progress=False)
""")


def test_kill_9_during_training_resumes_to_identical_weights(reference, tmp_path):
    split, full = reference
    ckpt = tmp_path / "partial" / "key.pt"
    script = KILLED_TRAINING.format(tests=str(TESTS), threads=torch.get_num_threads(), ckpt=str(ckpt))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not ckpt.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ckpt.exists(), proc.stderr.read().decode() if proc.poll() is not None else "no checkpoint in 60 s"
        os.kill(proc.pid, signal.SIGKILL)  # after the first epoch's checkpoint, mid-way through the second
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert read_checkpoint(ckpt)["step"] < CFG.total_steps(4)  # it was stopped before the end
    model, batches = _model_and_batches(split)
    history = train(model, batches, CFG, device="cpu", checkpoint=ckpt, progress=False)
    assert [r["epoch"] for r in history] == [1, 2, 3]
    assert _weights_equal(model, full)


# --------------------------------------------------------------------------------------------
# Runs and sweeps: failures keep what finished and say where things are


def _fake_run(figure_id, scale, params, out_dir=None, progress=True):
    if params["width"] == 8:
        exc = FloatingPointError("training loss became nan by step 50")
        exc.failed_notebook = str(out_dir / f"{figure_id}.failed.ipynb")
        raise exc
    return out_dir / f"{figure_id}.ipynb", {"numbers": {"score": params["width"] * 10},
                                            "claims": [{"key": "c", "verdict": "reproduced"}],
                                            "provenance": {"wall_seconds": 1.0}}


def test_sweep_with_a_failing_point_keeps_the_finished_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "_run_checked", _fake_run)
    with pytest.raises(runs_mod.SweepFailed) as err:
        execution.sweep("B-F2A", "smoke", {"width": [4, 8, 16]}, out_dir=tmp_path)
    table = pd.read_csv(tmp_path / "results.csv")
    assert list(table.width) == [4, 8, 16] and list(table.status) == ["ok", "failed", "ok"]
    assert list(table.score.fillna(-1)) == [40, -1, 160]  # the finished runs' numbers are kept
    assert "FloatingPointError: training loss became nan" in table.error[1]
    assert table.notebook[1].endswith("run001/B-F2A.failed.ipynb")
    assert "1 of 3 sweep runs failed" in str(err.value) and str(tmp_path / "results.csv") in str(err.value)


def test_sweep_failure_through_the_cli_exits_1_naming_the_point(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(execution, "_run_checked", _fake_run)
    assert cli.main(["sweep", "B-F2A", "-p", "width", "4", "8", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "failed: width=8: FloatingPointError" in err and "B-F2A.failed.ipynb" in err
    assert str(tmp_path / "results.csv") in err and (tmp_path / "results.csv").exists()


def test_failed_run_keeps_its_partial_notebook(tmp_path, monkeypatch, capsys):
    import papermill
    from papermill.exceptions import PapermillExecutionError

    def fails_in_cell_3(nb, out_path, **kwargs):
        nb.cells = nb.cells[:3]
        nbformat.write(nb, out_path)
        raise PapermillExecutionError(2, 3, "train()", "FloatingPointError", "loss became nan", [])

    monkeypatch.setattr(papermill, "execute_notebook", fails_in_cell_3)
    out = tmp_path / "out"
    assert cli.main(["run", "B-F2A", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    kept = out / "B-F2A.failed.ipynb"
    assert "FloatingPointError: loss became nan (in cell 3)" in err and f"partial notebook: {kept}" in err
    assert len(nbformat.read(kept, as_version=4).cells) == 3
    assert sorted(p.name for p in out.iterdir()) == ["B-F2A.failed.ipynb"]  # no hidden leftovers


@pytest.mark.parametrize("command", [["run", "B-F2A"], ["sweep", "B-F2A", "-p", "width", "4", "8"]])
def test_unwritable_output_folder_fails_before_compute(tmp_path, monkeypatch, capsys, command):
    monkeypatch.setattr(execution, "execute", lambda *a, **k: pytest.fail("must not execute"))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert cli.main([*command, "--out", str(blocker / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"stitchkit: error: cannot write to {blocker / 'out'}") and "\n" not in err
    assert blocker.read_text() == "not a folder"


def test_unreachable_dask_scheduler_fails_within_the_timeout(tmp_path, monkeypatch, capsys):
    pytest.importorskip("distributed")
    monkeypatch.setattr(execution, "_run_checked", lambda *a, **k: pytest.fail("must not run"))
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    t0 = time.monotonic()
    code = cli.main(["sweep", "B-F2A", "-p", "width", "4", "--out", str(tmp_path), "--dask", address,
                     "--dask-timeout", "2"])
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err.strip()
    assert code == 2 and elapsed < 15, elapsed
    assert f"cannot reach the Dask scheduler at {address} within 2 s" in err and "\n" not in err


def test_nonpositive_dask_timeout_is_refused(capsys):
    assert cli.main(["sweep", "B-F2A", "-p", "width", "4", "--dask", "tcp://x:1", "--dask-timeout", "0"]) == 2
    assert "--dask-timeout must be > 0" in capsys.readouterr().err


# --- reliability, round two (issue 35) ---------------------------------------------------------


def test_two_runs_started_in_the_same_second_get_their_own_folders(tmp_path, monkeypatch):
    """Finding 9: the default run folder is named by the second; a second run then used to write
    into the first's folder and one output was lost."""
    monkeypatch.setattr(execution, "_stamp", lambda: "20261124-163844")
    first = fileio.fresh_folder(tmp_path / "runs" / "S-F1A", "20261124-163844-smoke")
    second = fileio.fresh_folder(tmp_path / "runs" / "S-F1A", "20261124-163844-smoke")
    assert first.name == "20261124-163844-smoke" and second.name == "20261124-163844-smoke-2"
    assert first.is_dir() and second.is_dir()


def test_an_empty_out_is_refused(capsys):
    """Finding 8: ``--out ""`` silently used runs/."""
    assert cli.main(["run", "B-F2A", "--scale", "smoke", "--out", ""]) == 2
    assert "--out is empty" in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    ([], "must hold a JSON object, not list"),
    ({"id": "B-F2A", "scale": "demo"}, "missing claims"),
    ({"id": "B-F2A", "scale": "demo", "claims": [{"key": "k", "text": "a claim"}]}, "claim 'k' has verdict None"),
    ({"id": "B-F2A", "scale": "huge", "claims": []}, "unknown scale 'huge'"),
])
def test_a_damaged_results_file_is_a_named_error_not_a_smaller_scorecard(tmp_path, content, message):
    """Finding 10: a claim that lost its verdict silently left the scorecard's counts; a file
    holding [] crashed the build with an AttributeError."""
    from stitchkit.book import catalogue

    (tmp_path / "bansal").mkdir()
    res = tmp_path / "bansal" / "B-F2A.results.json"
    res.write_text(json.dumps(content))
    with pytest.raises(ValueError, match=message) as err:
        catalogue.load_pages(tmp_path)
    assert str(res) in str(err.value)


def test_a_broken_parameters_cell_affects_only_its_own_notebook(tmp_path, monkeypatch, capsys):
    """Finding 6: a syntax error in one notebook's parameters cell made `list` and `run` of every
    notebook exit 1 with a traceback that named no file."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    for fid in ("B-F2A", "B-F4"):
        shutil.copy(execution.paths.NOTEBOOKS_DIR / f"{fid}.py", nbs / f"{fid}.py")
    bad = nbs / "B-F4.py"
    bad.write_text(bad.read_text().replace('scale = "smoke"', 'scale = "smoke" +', 1))
    monkeypatch.setattr(execution.paths, "NOTEBOOKS_DIR", nbs)
    broken: dict[str, str] = {}
    assert list(notebooks.discover(nbs, broken=broken)) == ["B-F2A"]
    assert str(bad) in broken["B-F4"] and "does not parse" in broken["B-F4"]
    assert notebooks.get_notebook("B-F2A", nbs).id == "B-F2A"
    with pytest.raises(ValueError, match=f"{bad}: the parameters cell does not parse"):
        notebooks.get_notebook("B-F4", nbs)
    assert cli.main(["list"]) == 2
    out, err = capsys.readouterr()
    assert "B-F2A" in out and f"B-F4 cannot be listed: {bad}" in err and "Traceback" not in err
    assert cli.main(["run", "B-F4", "--scale", "smoke"]) == 2
    assert f"{bad}: the parameters cell does not parse" in capsys.readouterr().err
    # the book goes on without it (issue 50): named, the other notebook executed
    ran = []
    monkeypatch.setattr(execution, "execute", lambda info, *a, **k: ran.append(info.id))
    problems: dict[str, str] = {}
    execution.build_book(build=False, book_dir=tmp_path / "book", problems=problems, progress=False)
    assert ran == ["B-F2A"] and "does not parse" in problems["B-F4"]
    assert "B-F4: not executed" in capsys.readouterr().err


def test_a_failing_page_does_not_stop_the_book(tmp_path, monkeypatch, capsys):
    """Issue 50, finding 3: one stale page that raises when re-executed stopped the whole build."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    for fid in ("B-F2A", "B-F4", "B-F5"):
        shutil.copy(execution.paths.NOTEBOOKS_DIR / f"{fid}.py", nbs / f"{fid}.py")
    monkeypatch.setattr(execution.paths, "NOTEBOOKS_DIR", nbs)
    ran = []

    def execute(info, *a, **k):
        ran.append(info.id)
        if info.id == "B-F4":
            raise RuntimeError("a cell raised")

    monkeypatch.setattr(execution, "execute", execute)
    problems: dict[str, str] = {}
    execution.build_book(build=False, book_dir=tmp_path / "book", problems=problems, progress=False)
    assert ran == ["B-F2A", "B-F4", "B-F5"] and list(problems) == ["B-F4"]
    assert "RuntimeError: a cell raised" in problems["B-F4"] and "committed page is kept" in capsys.readouterr().err


def test_a_nan_results_file_and_a_broken_notebook_leave_the_rest_of_the_book(tmp_path):
    """Issue 50, finding 3: one NaN aborted the build after the scorecard files had been rewritten
    with 'nan'; a broken notebook stopped it too. Now both are named and left out; every other
    page is in the scorecard, its files hold finite numbers only, the part page says why."""
    import warnings

    from stitchkit.book import bookpages

    book = tmp_path / "book"
    shutil.copytree(execution.paths.BOOK_DIR, book, ignore=shutil.ignore_patterns("_build"))
    res = book / "hernandez" / "H-T1.results.json"
    res.write_text(res.read_text().replace('"numbers": {', '"numbers": {"broken": NaN, ', 1))
    (book / "smith" / "S-F1A.ipynb").write_text('{"cells": [')
    problems: dict[str, str] = {}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        bookpages.write_pages(book, toc=tmp_path / "_toc.yml", problems=problems)
    assert "numbers.broken is not a finite number" in problems["H-T1"]
    assert "not a readable notebook" in problems["S-F1A"]
    assert {str(w.message).split(":")[0] for w in seen} >= {"book page H-T1 not available", "book page S-F1A not available"}
    data = json.loads((book / "_static" / "results.json").read_text())
    import re

    assert not re.search(r"\bnan\b", (book / "_static" / "results.csv").read_text(), re.IGNORECASE)
    ids = {r["id"] for r in data["rows"]}
    assert "H-F5" in ids and "S-TC1" in ids
    assert "smith/S-F1A" not in (tmp_path / "_toc.yml").read_text() and "smith/S-F1B" in (tmp_path / "_toc.yml").read_text()
    assert "not available:" in (book / "hernandez" / "index.md").read_text()


def test_an_image_folder_without_its_split_level_is_named_as_such(tmp_path):
    """Finding 7: cifar10/airplane/*.jpg (no train/test level) was reported as not found, though
    the folder exists."""
    folder = tmp_path / "cifar10" / "airplane"
    folder.mkdir(parents=True)
    (folder / "0001.jpg").write_bytes(b"")
    with pytest.raises(integrity.DataNotFoundError, match=r"cifar10 exists but has no train/ and test/ folders "
                                                     r"\(it holds: airplane\)"):
        archives.load("cifar10", "train", root=tmp_path)


def test_a_results_folder_that_does_not_exist_is_refused_before_the_run(tmp_path, capsys):
    """Finding 5: `run B-F2B -p results_dir <missing folder>` exited 0 with a page saying B-F6 had
    not run yet."""
    for fid in ("B-F2B", "B-T1"):
        code = cli.main(["run", fid, "--scale", "smoke", "-p", "results_dir", str(tmp_path / "nowhere"),
                         "--out", str(tmp_path / "out")])
        assert code == 2
        assert "parameter 'results_dir'" in (err := capsys.readouterr().err) and "expected an existing folder" in err
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_sigterm_during_a_run_keeps_the_partial_notebook_and_exits_143(tmp_path, monkeypatch, capsys):
    """Issue 35, finding 12: SIGTERM (kill, timeout) is handled like a failure, not a silent death."""
    import os
    import signal
    import time

    import papermill

    def terminated_in_cell_2(nb, out_path, **kwargs):
        nb.cells = nb.cells[:2]
        nbformat.write(nb, out_path)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        pytest.fail("SIGTERM did not stop the run")

    monkeypatch.setattr(papermill, "execute_notebook", terminated_in_cell_2)
    out = tmp_path / "out"
    before = signal.getsignal(signal.SIGTERM)
    assert cli.main(["run", "B-F2A", "--out", str(out)]) == 143
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is the CLI's only while it runs
    err = capsys.readouterr().err
    kept = out / "B-F2A.failed.ipynb"
    assert err.startswith("stitchkit: error: interrupted (SIGTERM)") and f"partial notebook: {kept}" in err
    assert len(nbformat.read(kept, as_version=4).cells) == 2
    assert not (out / ".B-F2A.ipynb.running.ipynb").exists()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_a_running_cell_within_seconds(tmp_path, sig):
    """Issue 50, finding 1: the kernel runs in a session of its own, so neither Ctrl-C nor SIGTERM
    reached it and the run waited for the cell to end (130 s). Now the signal kills the kernel:
    the run ends within 5 seconds, and the partial notebook marks the cell it stopped."""
    nb = tmp_path / "X-9.py"
    nb.write_text('# %% tags=["parameters"]\nscale = "smoke"  # smoke | demo\n\n# %%\nimport time\n\n'
                  '# %%\ntime.sleep(120)\n\n# %%\nprint("never")\n')
    out = tmp_path / "out" / "X-9.ipynb"
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from stitchkit.book import execution, notebooks
        info = notebooks.NotebookInfo("X-9", Path({str(nb)!r}), notebooks.parse_parameters(Path({str(nb)!r})))
        try:
            execution.execute(info, Path({str(out)!r}), "smoke", progress=False)
        except KeyboardInterrupt as exc:
            print("stopped:", type(exc).__name__, exc, flush=True)
            sys.exit(143 if isinstance(exc, execution.Terminated) else 130)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = out.with_name(".X-9.ipynb.running.ipynb")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:  # wait until the kernel is in the sleeping cell
        if running.exists() and '"status": "running"' in running.read_text() and "time.sleep" in running.read_text():
            break
        time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the notebook never reached its long cell: " + proc.communicate()[0][-2000:])
    time.sleep(1)
    t0 = time.monotonic()
    proc.send_signal(sig)
    output = proc.communicate(timeout=60)[0]
    took = time.monotonic() - t0
    assert took < 5, f"the run took {took:.1f} s to stop after {sig.name}"
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), output
    kept = nbformat.read(out.with_name("X-9.failed.ipynb"), as_version=4)
    code = [c for c in kept.cells if c.cell_type == "code"]
    assert [c.metadata.papermill["status"] for c in code][-2:] == ["interrupted", "pending"]
    assert f"stitchkit stopped the run here ({sig.name})" in code[-2].outputs[-1]["evalue"]


def test_an_interrupted_sweep_lists_the_interrupted_and_pending_points(tmp_path, monkeypatch, capsys):
    """Issue 35, finding 12: Ctrl-C during a sweep: one line, exit 130, and results.csv keeps the
    finished run, the interrupted one and those never started."""
    def interrupted_at_8(figure_id, scale, params, out_dir=None, progress=True):
        if params["width"] == 8:
            raise KeyboardInterrupt
        return _fake_run(figure_id, scale, params, out_dir, progress)

    monkeypatch.setattr(execution, "_run_checked", interrupted_at_8)
    assert cli.main(["sweep", "B-F2A", "-p", "width", "4", "8", "16", "32", "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip() and "sweep:" not in line]  # tqdm's bar aside
    assert len(lines) == 1 and "interrupted (SIGINT) after 1 of 4 runs; 2 pending" in lines[0]
    table = pd.read_csv(tmp_path / "results.csv")
    assert list(table.width) == [4, 8, 16, 32]
    assert list(table.status) == ["ok", "interrupted", "pending", "pending"]


def test_a_killed_runs_running_copy_is_cleared_before_the_next_run(tmp_path, monkeypatch):
    """Issue 35, finding 13: kill -9 leaves ``.<ID>.ipynb.running.ipynb``; the next run starts clean."""
    import papermill

    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".B-F2A.ipynb.running.ipynb"
    stale.write_text("left by a killed run")
    seen = []

    def fails(nb, out_path, **kwargs):
        seen.append(Path(out_path).exists())
        raise RuntimeError("stop")

    monkeypatch.setattr(papermill, "execute_notebook", fails)
    with pytest.raises(RuntimeError):
        execution.run_notebook("B-F2A", "smoke", out_dir=out)
    assert seen == [False] and not (out / "B-F2A.failed.ipynb").exists()


def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch, capsys):
    """Issue 35, finding 13: ENOSPC from a write names no file by itself; the error names it."""
    import errno

    from stitchkit.base import fileio

    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    target = tmp_path / "cache" / "entry.pt"
    with pytest.raises(OSError, match="No space left on device") as err:
        fileio.atomic_write_bytes(target, b"x" * 10)
    assert err.value.filename == str(target) and err.value.errno == errno.ENOSPC
    assert not list(target.parent.glob(".*.tmp"))  # nothing half-written left behind


def test_stale_temporary_files_are_removed_and_live_ones_kept(tmp_path):
    """Issue 35, finding 13: a writer killed mid-write leaves ``.<name>.*.tmp``; the next run's
    cache clears those no one has touched for 10 minutes, and keeps a live writer's."""
    from stitchkit.base import fileio

    (tmp_path / "datasets").mkdir()
    old = tmp_path / "datasets" / ".cifar10-train-x.npz.abc.tmp"
    live = tmp_path / "datasets" / ".cifar10-test-x.npz.def.tmp"
    for f in (old, live):
        f.write_bytes(b"partial")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert fileio.remove_stale_tmp(tmp_path) == [old]
    assert not old.exists() and live.exists()


def test_an_altered_checksum_memo_is_recomputed_with_a_warning(tmp_path, monkeypatch):
    """Issue 35, finding 13: a flipped character in a ``datasets/sha256-*.txt`` memo is caught."""

    monkeypatch.setenv("STITCHKIT_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "archive.bin"
    src.write_bytes(b"some archive bytes")
    archives._SHA256_MEMO.clear()
    right = archives._file_sha256(src)
    memo = next((tmp_path / "cache" / "datasets").glob("sha256-*.txt"))
    digest, check = memo.read_text().split()
    flipped = ("0" if digest[0] != "0" else "1") + digest[1:]
    memo.write_text(f"{flipped} {check}\n")
    archives._SHA256_MEMO.clear()
    with pytest.warns(UserWarning, match="checksum memo .* is corrupt"):
        assert archives._file_sha256(src) == right
    archives._SHA256_MEMO.clear()
    assert archives._file_sha256(src) == right  # rewritten, and trusted again


def test_a_run_needing_an_entry_another_run_computes_waits_for_it(tmp_path, capsys, monkeypatch):
    """Issue 35, finding 14: one lock per cache key; the second run waits, says so, and reads the
    first run's entry instead of computing it again."""
    import threading

    from stitchkit.base.store import Store, config_key

    monkeypatch.setenv("STITCHKIT_PROGRESS", "1")
    store = Store(tmp_path / "store")
    config = {"model": "tiny", "seed": 0}
    key = config_key(config)
    started = threading.Event()

    def first_run():
        with store.lock(key):
            started.set()
            time.sleep(0.5)
            store.put(config, {"by": "first"}, {"w": torch.zeros(1)})

    t = threading.Thread(target=first_run)
    t.start()
    started.wait()
    computed = []
    entry = store.get_or_compute(config, lambda: computed.append(1) or ({"by": "second"}, {"w": torch.ones(1)}))
    t.join()
    assert computed == [] and entry.metrics == {"by": "first"}
    assert "waiting for another run computing" in capsys.readouterr().err


def test_a_dask_scheduler_without_workers_fails_within_the_timeout(tmp_path, monkeypatch, capsys):
    """Issue 35, finding 11: a live scheduler with no workers is named, not waited on forever."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(execution, "_run_checked", lambda *a, **k: pytest.fail("must not run"))
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        t0 = time.monotonic()
        code = cli.main(["sweep", "B-F2A", "-p", "width", "4", "--out", str(tmp_path), "--dask",
                         cluster.scheduler_address, "--dask-timeout", "2"])
        elapsed = time.monotonic() - t0
    err = capsys.readouterr().err.strip()
    assert code == 2 and elapsed < 20, elapsed
    assert f"the Dask scheduler at {cluster.scheduler_address} has no workers (waited 2 s)" in err


@pytest.mark.slow
def test_two_runs_from_an_empty_cache_are_bit_identical(tmp_path, monkeypatch):
    """Issue 35, finding 15: the models and the stitches of two runs from empty caches on one
    machine (same thread count) agree bit for bit."""
    from dataclasses import replace

    from stitchkit.base.store import Store
    from stitchkit.data.datasets import DataSpec
    from stitchkit.experiments.bansal import f2a
    from stitchkit.stitching.grid import stitch_grid
    from stitchkit.stitching.grid_spec import Net

    cfg = replace(f2a.PRESETS_F2A["smoke"], model_epochs=0.5, stitch_epochs=0.5, stitch_train_size=500,
                  dm_images=200, test_size=500)
    tensors = []
    for run in ("a", "b"):
        monkeypatch.setenv("STITCHKIT_CACHE", str(tmp_path / run))
        store = Store(tmp_path / run / "store")
        rx, sx = Net("receiver", cfg.model(0)), Net("trained", cfg.model(1))
        t = stitch_grid([sx], [rx], [("block3", "block3")], cfg.recipe(), DataSpec("cifar10"), store=store,
                        progress=False)
        # the stitch starts from a least-squares fit to both models' activations: equal stitches
        # need equal models, and the accuracy is the stitched model's on the test images
        tensors.append({**store.read(t.key.iloc[0]).tensors, "accuracy": torch.tensor(t.accuracy.iloc[0])})
    assert tensors[0].keys() == tensors[1].keys()
    assert all(torch.equal(tensors[0][k], tensors[1][k]) for k in tensors[0])


def test_one_version_string():
    import re
    from pathlib import Path

    import stitchkit

    text = (Path(stitchkit.__file__).parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', text, flags=re.M)[1] == stitchkit.__version__


def test_the_kernel_socket_folder_goes_with_the_kernel():
    # issue 50, finding 6: every run left an empty /tmp/stitchkit-kernel-* folder behind
    import asyncio

    from stitchkit.book.kernels import ipc_kernel_manager

    km = ipc_kernel_manager()()
    folder = km._ipc_dir
    assert folder.is_dir() and folder.name.startswith("stitchkit-kernel-")
    asyncio.run(km.cleanup_resources())  # the manager is asynchronous, as nbclient's own
    assert not folder.exists()


@pytest.mark.parametrize("argv, message", [
    (["run", "B-F4", "--scale", "smoke", "-p", "test_size", "1"], "parameter 'test_size' = 1 is invalid"),
    (["run", "B-F4", "--scale", "smoke", "-p", "kernel_sizes", "[]"], "parameter 'kernel_sizes' = [] is invalid"),
    (["run", "B-F2A", "--scale", "smoke", "-p", "stitch_batch", "99999999999999999999"],
     "parameter 'stitch_batch' = 99999999999999999999 is invalid"),
    (["run", "B-F2A", "--scale", "smoke", "-p", "dm_images", "1000000000"], "parameter 'dm_images' = 1000000000 is invalid"),
    # issue 66, finding 6: these computed for minutes (or for ever), or failed inside the notebook
    (["run", "S-FC5", "--scale", "smoke", "-p", "noise_per_class", "1000000000000"],
     "parameter 'noise_per_class' = 1000000000000 is invalid: expected an integer ≥ 1 and ≤ 60000"),
    (["run", "S-F1B", "--scale", "smoke", "-p", "inits", "1000000000"], "parameter 'inits' = 1000000000 is invalid"),
    (["run", "B-F7", "--scale", "smoke", "-p", "samples_pair", "[-5000, 100]"],
     "parameter 'samples_pair' = [-5000, 100] is invalid: item 1 (-5000) is not allowed"),
    (["run", "B-F7", "--scale", "smoke", "-p", "samples_pair", "[5000]"], "expected exactly 2 items, got 1"),
    (["run", "B-F7", "--scale", "smoke", "-p", "samples_pair", "[512, 1024, 2048]"], "expected exactly 2 items, got 3"),
    (["run", "B-F7", "--scale", "smoke", "-p", "width_pair", "[0.25, 1e309]"],
     "parameter 'width_pair' = [0.25, inf] is invalid: item 2 (inf) is not allowed"),
    (["run", "B-F2A", "--scale", "smoke", "-p", "stitch_lr", "1e6"], "parameter 'stitch_lr' = 1000000.0 is invalid"),
    (["run", "B-F2C", "--scale", "smoke", "-p", "bottom_samples", "[5000, 99999999]"], "item 2 (99999999) is not allowed"),
    (["run", "B-F4", "--scale", "smoke", "-p", "test_size", "9" * 100_000], "... (100002 characters) is invalid"),
])
def test_values_out_of_range_are_refused_before_compute(argv, message, tmp_path, monkeypatch, capsys):
    """Issue 50, finding 4: each of these started computing (or failed inside a cell after 56 s)."""
    ran = []
    monkeypatch.setattr(execution, "execute", lambda *a, **k: ran.append(a))
    assert cli.main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err and not ran


@pytest.mark.parametrize("var, value, valid", [
    ("STITCHKIT_PRECISION", "fp8", "valid: bf16, fp32"),
    ("STITCHKIT_RESAMPLES", "ten", "a whole number from 20 to 100,000"),
    ("STITCHKIT_RESAMPLES", "5", "a whole number from 20 to 100,000"),
    # issue 66, finding 6: no upper bound (an ArrayMemoryError traceback), and these failed inside the
    # notebook without naming the variable, or were accepted in silence
    ("STITCHKIT_RESAMPLES", "1000000000000", "a whole number from 20 to 100,000"),
    ("STITCHKIT_DASK_TIMEOUT", "abc", "expected seconds"),
    ("STITCHKIT_DASK_TIMEOUT", "-1", "expected seconds"),
    ("STITCHKIT_COMPILE", "maybe", "valid: 0 (never compile), 1 (always)"),
    ("STITCHKIT_PROGRESS", "sometimes", "valid: 0, 1"),
    ("STITCHKIT_ALLOW_PARTIAL_DATA", "perhaps", "valid: 0, 1"),
    ("STITCHKIT_DOWNLOAD", "please", "valid: 0, 1"),
])
def test_a_bad_environment_variable_is_refused_at_start_up(var, value, valid, monkeypatch, capsys):
    monkeypatch.setenv(var, value)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert f"{var}={value!r} is invalid" in err and valid in err and "Traceback" not in err


@pytest.mark.parametrize("address", ["garbage:xyz", "tcp://host:port", "a b:1"])
def test_a_malformed_dask_address_is_refused_at_start_up(address, monkeypatch, capsys):
    monkeypatch.setenv("STITCHKIT_DASK", address)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert f"STITCHKIT_DASK={address!r} is not a Dask scheduler's address" in err and "Traceback" not in err


def test_a_download_mirror_that_is_not_a_url_is_refused_at_start_up(monkeypatch, capsys):
    monkeypatch.setenv("STITCHKIT_DATA_MIRROR", "https://example.org/mnist/ mirror.example.org")
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert "STITCHKIT_DATA_MIRROR: 'mirror.example.org' is not a base URL" in err and "Traceback" not in err


def test_well_formed_dask_addresses_pass_the_check(monkeypatch):
    from stitchkit.base.environment import check_environment

    for address in ("tcp://127.0.0.1:8786", "scheduler:8786", "tls://dask.example.org:8786", "inproc://10.0.0.1/1/2",
                    "tcp://[::1]:8786"):
        monkeypatch.setenv("STITCHKIT_DASK", address)
        check_environment()


def test_a_long_environment_value_is_cut_in_its_error(monkeypatch, capsys):
    monkeypatch.setenv("STITCHKIT_PRECISION", "x" * 100_000)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert "(100000 characters)" in err and len(err) < 1000


def test_a_failed_run_leaves_no_results_beside_its_partial_notebook(tmp_path, monkeypatch):
    """Issue 50, finding 6: an interrupted point left a results.json beside its failed notebook;
    and a page's results must never be newer than its notebook. The kernel's results replace the
    page's only when the run succeeds."""
    import papermill

    from stitchkit.verdicts.results import RESULTS_ENV

    def saved_then_failed(nb, out_path, **kwargs):
        Path(os.environ[RESULTS_ENV]).write_text('{"id": "B-F2A", "claims": []}')  # run.save() ran...
        nbformat.write(nb, out_path)
        raise RuntimeError("...then a later cell raised")

    monkeypatch.setattr(papermill, "execute_notebook", saved_then_failed)
    out = tmp_path / "B-F2A.ipynb"
    old = out.with_suffix(".results.json")
    old.write_text('{"the": "committed results"}')
    with pytest.raises(RuntimeError, match="a later cell raised"):
        execution.execute(notebooks.get_notebook("B-F2A"), out, "smoke", progress=False)
    assert old.read_text() == '{"the": "committed results"}'
    assert (tmp_path / "B-F2A.failed.ipynb").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["B-F2A.failed.ipynb", "B-F2A.results.json"]


def test_missing_data_is_a_bad_input_before_compute(tmp_path, monkeypatch, capsys):
    """Issue 50, finding 4: a data fault exited 1 from inside the notebook; the command line
    documents 2, and nothing should run first."""
    ran = []
    monkeypatch.setattr(execution, "execute", lambda *a, **k: ran.append(a))
    monkeypatch.setenv("STITCHKIT_DATA_ROOT", str(tmp_path / "empty"))
    assert cli.main(["run", "S-F1A", "--scale", "smoke", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "dataset 'mnist' not found" in err and "Traceback" not in err and not ran


@pytest.mark.parametrize("channels_last", [False, True])
def test_batches_come_in_the_memory_format_asked_for_whatever_the_split_holds(channels_last):
    """Issue 50, finding 6: a split whose images an earlier step left NHWC made oneDNN pick another
    convolution (brgemm instead of jit, other roundings), so a cold run's measurements differed from
    a warm run's at 1e-6. Every batch now comes in the format asked for."""
    images = torch.randint(0, 256, (6, 3, 8, 8), dtype=torch.uint8)
    for layout in (images, images.contiguous(memory_format=torch.channels_last)):
        split = splits.Split(layout, torch.arange(6) % 2, ("a", "b"), "fp")
        x, _ = next(iter(Batches(split, 4, normalisation="cifar", channels_last=channels_last)))
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        assert x.is_contiguous(memory_format=fmt)


def test_a_warm_run_measures_what_the_cold_run_measured(tmp_path):
    """Issue 50, finding 6: Hernandez et al.'s MSEs (the numbers that differed at 1e-6) of a run
    that trains its networks and stitches equal bit for bit those of a later process reading
    them back from the cache."""
    script = textwrap.dedent("""
        import sys, numpy as np
        from dataclasses import replace
        from stitchkit.experiments.hernandez import all_layers, mse
        cfg = replace(mse.PRESETS_T1["smoke"], archs=("r1111",), controls=("r1111",), mse_images=200)  # one network: its stitches into itself
        table, _ = all_layers.all_pairs(cfg, diagonal=True, progress=False)
        per, _ = mse.mse_stats(table, cfg, diagonal=True, n_images=cfg.mse_images, progress=False)
        np.savez(sys.argv[1], **{k: np.asarray(v) for k, v in per.attrs["per_image"].items()})
    """)
    env = {**os.environ, "STITCHKIT_CACHE": str(tmp_path / "cache"), "STITCHKIT_PROGRESS": "0"}
    runs = []
    for name in ("cold", "warm"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / f"{name}.npz")], env=env, check=True)
        runs.append(dict(np.load(tmp_path / f"{name}.npz")))
    assert runs[0].keys() == runs[1].keys() == {"EV", "ES", "SV"}
    assert all(np.array_equal(runs[0][k], runs[1][k]) for k in runs[0])


@pytest.mark.slow
def test_a_page_behind_the_library_is_current_again_when_its_rerun_reproduces_it(tmp_path, monkeypatch, capsys):
    """Issue 48: a run records the library modules it imported; a page whose module changed is
    behind, ``make rerun`` re-runs it (from the cache), and a re-run that reproduces its numbers,
    verdicts and texts bit for bit makes it current again, keeping when it was first computed.
    Three pages: example images (no network), and two that train networks and stitches."""
    from stitchkit.registry import staleness

    # the session's cache (conftest): the networks the pages' own smoke tests trained serve here too;
    # whether the first build reads them or trains them, the re-run must reproduce it bit for bit
    nbs, book = tmp_path / "notebooks", tmp_path / "book"
    nbs.mkdir()
    ids = ("S-F1A", "S-4.2", "H-T1")
    for fid in ids:
        shutil.copy(execution.paths.NOTEBOOKS_DIR / f"{fid}.py", nbs / f"{fid}.py")
    monkeypatch.setattr(execution.paths, "NOTEBOOKS_DIR", nbs)
    execution.build_book(build=False, book_dir=book, stale_scale="smoke", progress=False)
    infos = [notebooks.get_notebook(fid) for fid in ids]
    first = {}
    for info in infos:
        path = info.book_notebook(book).with_suffix(".results.json")
        results = json.loads(path.read_text())
        assert "stitchkit/verdicts/results.py" in results["library_sha256"] and execution.stale_reason(info, book) is None
        results["library_sha256"]["stitchkit/verdicts/results.py"] = "0" * 64  # as if the module had changed since
        path.write_text(json.dumps(results))
        first[info.id] = results
        assert execution.stale_reason(info, book) == "library changed since the run: verdicts/results.py"
    capsys.readouterr()
    execution.build_book(build=False, book_dir=book, stale_scale="smoke", progress=False, rerun_behind=True)
    out = capsys.readouterr().out
    for info in infos:
        assert f"{info.id}: the re-run reproduced the run it replaces bit for bit" in out
        again = json.loads(info.book_notebook(book).with_suffix(".results.json").read_text())
        assert execution.stale_reason(info, book) is None and staleness.same_results(first[info.id], again) == []
        assert again["provenance"]["first_run"]["wall_seconds"] == first[info.id]["provenance"]["wall_seconds"]


def test_list_survives_a_malformed_field_and_names_a_dotted_id(tmp_path, monkeypatch, capsys):
    """Issue 66, finding 7: a results file whose wall_seconds is a string gave a TypeError
    traceback and nothing was listed; a broken S-4.2.results.json was named but its row said
    "no page yet" (the ID split at its dot)."""
    from stitchkit.book import catalogue

    book = tmp_path / "book"
    shutil.copytree(execution.paths.BOOK_DIR, book, ignore=shutil.ignore_patterns("_build", "*.ipynb", "*.svg"))
    res = book / "bansal" / "B-F4.results.json"
    doc = json.loads(res.read_text())
    doc["provenance"]["wall_seconds"] = "ten minutes"
    res.write_text(json.dumps(doc))
    (book / "smith" / "S-4.2.results.json").write_text("{ not json")
    monkeypatch.setattr(cli, "load_pages", lambda problems=None: catalogue.load_pages(book, problems=problems))
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line[:1] in "BHSJX" and " " in line}
    assert "results file not readable" in rows["B-F4"] and "results file not readable" in rows["S-4.2"]
    assert "provenance.wall_seconds must be a number, not 'ten minutes'" in out and "Traceback" not in out
    assert "results file not readable" not in rows["B-F2A"]
    assert catalogue.figure_id_of(Path("H-F2.demo.results.json")) == "H-F2"
    assert catalogue.figure_id_of(Path("S-4.2.results.json")) == "S-4.2"


def test_an_unknown_scale_is_named_before_a_missing_data_set(tmp_path, monkeypatch, capsys):
    """Issue 66, finding 8: with no data root, `run B-F2A --scale nonsense` reported the missing
    data set, not the unknown scale."""
    monkeypatch.setenv("STITCHKIT_DATA_ROOT", str(tmp_path / "nowhere"))
    for command in ("run", "sweep"):
        argv = [command, "B-F2A", "--scale", "nonsense", "--out", str(tmp_path / "out")]
        assert cli.main(argv + (["-p", "width", "8"] if command == "sweep" else [])) == 2
        err = capsys.readouterr().err
        assert "unknown scale 'nonsense'" in err and "nowhere" not in err


def test_a_parameter_a_page_does_not_use_is_refused(tmp_path, capsys):
    """Issue 66, finding 6: S-4.2 accepted noise_per_class (a field of the Smith config it shares
    with S-FC5) and never used it."""
    assert cli.main(["run", "S-4.2", "--scale", "smoke", "-p", "noise_per_class", "10", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "S-4.2 does not use noise_per_class" in err and "inits" in err
    from stitchkit.book.notebooks import get_notebook

    assert "noise_per_class" not in get_notebook("S-4.2").parameter_names()
    assert "noise_per_class" in get_notebook("S-FC5").parameter_names()


def test_a_long_sweep_says_its_estimate_and_asks_for_yes(tmp_path, monkeypatch, capsys):
    """Issue 66, finding 8: a 64,000-point sweep started without a word about its estimated 85 hours."""
    ran = []
    monkeypatch.setattr(execution, "sweep", lambda *a, **k: ran.append(a))
    values = [str(v) for v in range(100, 140)]
    argv = ["sweep", "B-F4", "--scale", "demo", "-p", "test_size", *values, "--out", str(tmp_path / "s")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "sweep: 40 run(s) of B-F4 at demo" in err and "hours" in err and "pass --yes to start it" in err
    assert err.startswith("stitchkit: error: ") and err.count("\n") == 1  # one line
    assert not ran


def test_a_full_disk_names_the_path_and_keeps_a_valid_partial_notebook(tmp_path, monkeypatch, capsys):
    """Issue 66, finding 5: on a full disk `run` said "No space left on device" without the path,
    and the partial notebook it kept was truncated, invalid JSON."""
    import errno

    import papermill

    def full_disk(nb, out_path, **kwargs):
        Path(out_path).write_text(nbformat.writes(nb)[:200])  # cut off mid-write
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(papermill, "execute_notebook", full_disk)
    out = tmp_path / "out"
    assert cli.main(["run", "B-F2A", "--scale", "smoke", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and str(out) in err
    kept = out / "B-F2A.failed.ipynb"
    nb = nbformat.read(kept, as_version=4)  # valid JSON, a notebook
    assert "could not be kept whole" in nb.cells[0].source
