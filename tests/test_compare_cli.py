"""``stitchkit compare``: two networks from files or factories, an image folder, a report (issue 49)."""

import json
from pathlib import Path

import pytest
import torch
from conftest import write_image_tree
from torch import nn

from stitchkit import cli


def tiny() -> nn.Module:
    """A factory the command line loads as test_compare_cli:tiny (fixed seed)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, stride=2, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))


def test_compare_two_models_on_an_image_folder_writes_a_report_and_every_number(tmp_path, capsys):
    write_image_tree(tmp_path, "imgs", per_class=8)
    other = tiny()
    torch.manual_seed(5)
    for p in other.parameters():
        nn.init.normal_(p, std=0.3)
    torch.save(other.state_dict(), tmp_path / "b.pt")  # B: the factory's architecture with these weights
    torch.save(tiny(), tmp_path / "a_whole.pt")  # A: a whole pickled model
    argv = ["compare", str(tmp_path / "a_whole.pt"), "test_compare_cli:tiny", "--weights-b", str(tmp_path / "b.pt"),
            "--layers-a", "1", "3", "--layers-b", "3", "--data", str(tmp_path / "imgs"), "--normalisation", "half",
            "--images", "24", "--fit-images", "24", "--batch", "8", "--measures", "cka", "dm", "dm_accuracy",
            "--out", str(tmp_path / "out"), "--trust-pickle"]
    assert cli.main(argv) == 0
    assert "report:" in capsys.readouterr().out
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["settings"]["images"] == 24 and doc["settings"]["normalisation"] == "half"
    assert {(r["layer_a"], r["measure"]) for r in doc["rows"]} == {(a, m) for a in ("1", "3")
                                                                    for m in ("cka", "dm", "dm_accuracy")}
    page = (tmp_path / "out" / "report.html").read_text()
    assert "data:image/png;base64," in page and "No trained stitch asked for" in page and "dm_accuracy" in page


@pytest.mark.parametrize("argv, message", [
    (["nowhere.pt", "test_compare_cli:tiny"], "'nowhere.pt' is neither module:callable"),
    (["test_compare_cli:nothing", "test_compare_cli:tiny"], "cannot load 'test_compare_cli:nothing'"),
    (["test_compare_cli:tiny", "test_compare_cli:tiny", "--measures", "cca"], "unknown measure(s) 'cca'"),
    (["test_compare_cli:tiny", "test_compare_cli:tiny", "--batch", "2"], "--batch must be at least 4"),
])
def test_bad_inputs_are_refused_naming_them(argv, message, tmp_path, capsys):
    write_image_tree(tmp_path, "imgs")
    full = ["compare", *argv[:2], "--layers-a", "1", "--layers-b", "1", "--data", str(tmp_path / "imgs"),
            "--normalisation", "half", "--out", str(tmp_path / "out"), *argv[2:]]
    assert cli.main(full) == 2
    assert message in capsys.readouterr().err


def test_a_state_dict_given_as_a_model_says_how_to_load_it(tmp_path, capsys):
    write_image_tree(tmp_path, "imgs")
    torch.save(tiny().state_dict(), tmp_path / "sd.pt")
    assert cli.main(["compare", str(tmp_path / "sd.pt"), "test_compare_cli:tiny", "--layers-a", "1", "--layers-b", "1",
                     "--data", str(tmp_path / "imgs"), "--normalisation", "half"]) == 2
    assert "holds a state dict, not a model" in capsys.readouterr().err


@pytest.mark.slow
def test_a_plain_install_compares_and_the_book_commands_say_they_need_the_checkout(tmp_path):
    """Issue 49: ``pip install .`` (not editable) gives a working library and ``stitchkit compare``
    away from the checkout, without the book's tools (its ``book`` extra: they cannot be imported
    here); the book's commands there say what they need."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    # built from a copy of what the package is made of: a build in the checkout leaves build/ there
    src = tmp_path / "src"
    shutil.copytree(repo / "stitchkit", src / "stitchkit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(repo / name, src / name)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--quiet",
                    "--target", str(site), str(src)], check=True, capture_output=True)
    blocked = tmp_path / "blocked"  # the book extra's packages, each failing on import as if not installed
    for tool in ("papermill", "jupytext", "nbformat", "nbclient", "ipykernel", "jupyter_book", "myst_nb", "sphinx"):
        (blocked / tool).mkdir(parents=True)
        (blocked / tool / "__init__.py").write_text(f"raise ImportError('{tool}: the book extra is not installed')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{blocked}:{site}", "HOME": str(tmp_path)}
    code = ("import torch, stitchkit; from torch import nn; torch.manual_seed(0)\n"
            "m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),"
            " nn.Linear(4, 10))\n"
            "x, y = torch.randn(64, 3, 8, 8), torch.randint(0, 10, (64,))\n"
            "t = stitchkit.compare(m, m, ['1'], ['1'], x, y, measures=('cka', 'dm', 'tlm_accuracy'))\n"
            "assert str(Path(stitchkit.__file__)).startswith(r'%s'), stitchkit.__file__\n"
            "print(len(t))\n") % site
    out = subprocess.run([sys.executable, "-c", "from pathlib import Path\n" + code], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split()[-1] == "5", out.stderr[-2000:]
    listed = subprocess.run([sys.executable, "-m", "stitchkit", "list"], cwd=tmp_path, env=env, capture_output=True,
                            text=True)
    assert listed.returncode == 2 and "needs the book's checkout" in listed.stderr


class _Payload:
    """A pickle whose loading would write a file: the marker proves the code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path(self.marker).write_text, ("ran",))


def test_a_whole_model_file_is_refused_without_trust_pickle_and_nothing_runs(tmp_path, capsys):
    """Issue 66, finding 1: a model file was unpickled with weights_only=False, so its payload ran."""
    write_image_tree(tmp_path, "imgs")
    marker = tmp_path / "ran.txt"
    torch.save({"model": _Payload(marker)}, tmp_path / "evil.pt")
    torch.save(tiny(), tmp_path / "whole.pt")
    for model in ("evil.pt", "whole.pt"):
        assert cli.main(["compare", str(tmp_path / model), "test_compare_cli:tiny", "--layers-a", "1", "--layers-b",
                         "1", "--data", str(tmp_path / "imgs"), "--normalisation", "half",
                         "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert "--trust-pickle" in err and "runs whatever code" in err and "Traceback" not in err
    assert not marker.exists()
    # as weights too (always tensors only, whatever --trust-pickle says)
    assert cli.main(["compare", "test_compare_cli:tiny", "test_compare_cli:tiny", "--weights-a", str(tmp_path / "evil.pt"),
                     "--layers-a", "1", "--layers-b", "1", "--data", str(tmp_path / "imgs"), "--normalisation", "half",
                     "--trust-pickle", "--out", str(tmp_path / "out")]) == 2
    assert not marker.exists() and "not loaded" in capsys.readouterr().err


def test_a_spec_is_resolved_as_a_spec_before_a_file_of_its_name(tmp_path, monkeypatch, capsys):
    """Issue 66, finding 1: a file in the working folder named like a spec was unpickled first."""
    marker = tmp_path / "ran.txt"
    monkeypatch.chdir(tmp_path)
    torch.save(_Payload(marker), tmp_path / "test_compare_cli:tiny")
    from stitchkit.comparing.inputs import load_model

    model = load_model("test_compare_cli:tiny")
    assert isinstance(model, nn.Module) and not marker.exists()


def test_a_factory_in_the_current_folder_loads_and_a_failing_one_is_named(tmp_path, monkeypatch):
    import sys

    from stitchkit.comparing.inputs import ModelSpecError, load_model

    (tmp_path / "mymodels_cwd.py").write_text(
        "import torch\n"
        "def net():\n    return torch.nn.Linear(2, 2)\n"
        "def needs(n):\n    return torch.nn.Linear(n, 2)\n"
        "def broken():\n    raise RuntimeError('no weights here')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert isinstance(load_model("mymodels_cwd:net"), torch.nn.Linear)
    with pytest.raises(ModelSpecError, match="raised TypeError when called with no arguments"):
        load_model("mymodels_cwd:needs")
    with pytest.raises(ModelSpecError, match="raised RuntimeError when called with no arguments: no weights here"):
        load_model("mymodels_cwd:broken")
    for bad in (".mymodels_cwd:net", "mymodels_cwd:"):
        with pytest.raises(ModelSpecError, match="neither module:callable"):
            load_model(bad)


def test_compare_checks_its_output_folder_before_any_compute(tmp_path, monkeypatch, capsys):
    """Issue 66, finding 4: --out was checked after the whole computation."""
    from stitchkit.comparing import compare

    write_image_tree(tmp_path, "imgs")
    monkeypatch.setattr(compare, "compare", lambda *a, **k: pytest.fail("computed before checking --out"))
    (tmp_path / "a_file").write_text("not a folder")
    for out in (tmp_path / "a_file", tmp_path / "a_file" / "under", "/proc/stitchkit-out"):
        assert cli.main(["compare", "test_compare_cli:tiny", "test_compare_cli:tiny", "--layers-a", "1", "--layers-b",
                         "1", "--data", str(tmp_path / "imgs"), "--normalisation", "half", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "cannot write to" in err and "Traceback" not in err


def test_two_runs_into_one_out_folder_cannot_both_write_there(tmp_path, capsys):
    """Issue 66, finding 5: two runs of one page into the same --out both exited 0 and printed the
    same paths; the first run's results were lost."""
    from stitchkit.base.fileio import claimed

    write_image_tree(tmp_path, "imgs")
    out = tmp_path / "out"
    out.mkdir()
    with claimed(out):  # as if another run were writing there now
        assert cli.main(["compare", "test_compare_cli:tiny", "test_compare_cli:tiny", "--layers-a", "1", "--layers-b",
                         "1", "--data", str(tmp_path / "imgs"), "--normalisation", "half", "--out", str(out)]) == 2
        assert f"another run is writing to {out}" in capsys.readouterr().err
        assert cli.main(["run", "S-F1A", "--scale", "smoke", "--out", str(out)]) == 2
        assert f"another run is writing to {out}" in capsys.readouterr().err


def test_a_report_is_replaced_as_a_set(tmp_path, monkeypatch):
    """Issue 66, finding 5: a stop right after results.json was written, or a full disk, left the
    new results.json beside the old report.html. Now both are written in full first: a failure
    while writing either leaves the old pair."""
    import os

    from stitchkit.base import fileio

    out = tmp_path / "out"
    fileio.atomic_write_files(out, {"results.json": "old numbers", "report.html": "old report"})
    real = os.fdopen
    calls = []

    def full_disk_on_second(fd, *a, **k):
        calls.append(fd)
        if len(calls) == 2:
            os.close(fd)
            raise OSError(28, "No space left on device")
        return real(fd, *a, **k)

    monkeypatch.setattr(fileio.os, "fdopen", full_disk_on_second)
    with pytest.raises(OSError, match="report.html"):
        fileio.atomic_write_files(out, {"results.json": "new numbers", "report.html": "new report"})
    monkeypatch.undo()
    assert (out / "results.json").read_text() == "old numbers" and (out / "report.html").read_text() == "old report"
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "results.json"]  # no temporary file left


def test_the_fit_and_test_samples_are_class_balanced_on_class_sorted_data(tmp_path):
    """Issue 67, finding 1: the command took the first N images of each split; on a split stored
    class by class (the shipped CIFAR-10 copy) that is one or two classes, and one-class minibatches."""
    from collections import Counter

    from stitchkit.comparing.inputs import load_images

    write_image_tree(tmp_path, "imgs", per_class=12)  # written (and read back) class by class
    for split in ("train", "test"):
        x, y, _ = load_images(str(tmp_path / "imgs"), split, 12, "half")
        counts = Counter(y.tolist())
        assert len(counts) >= 3 and max(counts.values()) - min(counts.values()) <= 1, counts
        assert y[:4].unique().numel() > 1  # mixed order, not class blocks
        again = load_images(str(tmp_path / "imgs"), split, 12, "half")[1]
        assert again.tolist() == y.tolist()  # seeded


def test_the_report_opens_with_the_accuracies_and_the_controls_outcome(tmp_path):
    """Issue 67, finding 4: the accuracies of A, B and the untrained sender were shown nowhere, the
    heat maps were sorted alphabetically, similarities and distances shared a colour map with no
    direction, the summary stayed green when controls failed, and the JSON had no provenance."""
    import numpy as np
    import pandas as pd

    from stitchkit.comparing.html_report import controls_summary, write_report

    rows = [["blocks.10", "x", "cka", 0.5, 0.4, 0.6, 100, "n", ""], ["blocks.2", "x", "cka", 0.7, 0.6, 0.8, 100, "n", ""],
            ["(B itself)", "x", "tlm_self_penalty", 3.0, 2.0, 4.0, 100, "positive control FAILED", "failed"],
            ["blocks.2", "x", "tlm_untrained_sender", 25.0, 15.0, 35.0, 100, "negative control UNDERPOWERED",
             "underpowered"]]
    table = pd.DataFrame(rows, columns=["layer_a", "layer_b", "measure", "value", "low", "high", "n_images", "note",
                                        "control"])
    table.attrs["accuracy"] = {"A": 0.91, "B": 0.5, "untrained A": 0.1}
    html_path, json_path = write_report(table, {"model_a": "a", "model_b": "b", "images": 100, "data": "d"}, tmp_path)
    page = html_path.read_text()
    assert "A 91.0%; B 50.0%; untrained A 10.0%" in page
    assert 'class="glance bad"' in page and "1 passed" not in page and "1 failed, 1 underpowered" in page
    assert "may be the stitch recipe's fault" in page and "too few images to tell" in page
    assert "similarity, 0 to 1: higher is more alike" in page
    doc = json.loads(json_path.read_text())
    assert doc["accuracy"]["untrained A"] == 0.1 and doc["controls"]["failed"] == 1
    ok = table[table.measure == "cka"]
    assert controls_summary(ok)[1] == "ok"
    # the heat map keeps the user's order (blocks.10 before blocks.2), not the alphabet's
    from stitchkit.comparing import html_report

    seen = {}
    real = html_report._heatmap

    def spy(t, m):
        r = t[t.measure == m]
        seen[m] = list(dict.fromkeys(r.layer_a))
        return real(t, m)

    html_report._heatmap = spy
    try:
        write_report(table, {"model_a": "a", "model_b": "b"}, tmp_path / "again")
    finally:
        html_report._heatmap = real
    assert seen["cka"] == ["blocks.10", "blocks.2"] and np.isfinite(table.value).all()


def test_the_json_records_its_provenance(tmp_path):
    write_image_tree(tmp_path, "imgs", per_class=8)
    out = tmp_path / "out"
    assert cli.main(["compare", "test_compare_cli:tiny", "test_compare_cli:tiny", "--layers-a", "1", "--layers-b", "1",
                     "--data", str(tmp_path / "imgs"), "--normalisation", "half", "--images", "24", "--fit-images", "24",
                     "--batch", "8", "--measures", "cka", "--out", str(out)]) == 0
    s = json.loads((out / "results.json").read_text())["settings"]
    assert {"versions", "device", "resamples", "weights_sha256", "images_sha256", "sample_seed"} <= set(s)
    assert s["weights_sha256"]["A"] == s["weights_sha256"]["B"] and len(s["images_sha256"]["measured"]) == 64


def test_layers_lists_a_models_cuts_with_their_shapes(capsys):
    """Issue 67, finding 7: no command listed a model's layers with their shapes."""
    assert cli.main(["layers", "test_compare_cli:tiny"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("layer") and any(line.split()[:3] == ["1", "ReLU", "6x32x32"] for line in out)
    assert any(line.split()[:2] == ["6", "Linear"] for line in out)
    assert cli.main(["layers", "test_compare_cli:nothing"]) == 2


def wide(num_classes: int = 3, width: int = 6) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(width, num_classes))


def test_a_factorys_arguments_device_seed_and_resamples_reach_the_comparison(tmp_path, capsys):
    write_image_tree(tmp_path, "imgs", per_class=8)
    out = tmp_path / "out"
    argv = ["compare", "test_compare_cli:wide", "test_compare_cli:wide", "--kwargs-a", '{"width": 4}',
            "--kwargs-b", '{"num_classes": 3}', "--layers-a", "1", "--layers-b", "1", "--data", str(tmp_path / "imgs"),
            "--normalisation", "half", "--images", "24", "--fit-images", "24", "--batch", "8", "--measures", "cka",
            "--device", "cpu", "--seed", "3", "--resamples", "50", "-q", "--out", str(out)]
    assert cli.main(argv) == 0
    s = json.loads((out / "results.json").read_text())["settings"]
    assert s["kwargs_a"] == {"width": 4} and s["sample_seed"] == 3 and s["resamples"] == 50
    for bad, message in ((["--kwargs-a", "[1]"], "must be a JSON object"), (["--kwargs-a", "{x"], "is not JSON"),
                         (["--device", "gpu0"], "is not a device"), (["--resamples", "5"], "--resamples must be")):
        assert cli.main([*argv[:-2], *bad, "--out", str(tmp_path / "o2")]) == 2
        assert message in capsys.readouterr().err


def test_an_unexpected_error_is_not_masked_where_papermill_is_missing(monkeypatch):
    """Issue 67, finding 3: the catch-all handler imported papermill, which the plain install
    lacks, so any unexpected error in compare surfaced as ModuleNotFoundError: papermill."""
    import builtins
    import sys

    from stitchkit.comparing import html_report

    real_import = builtins.__import__

    def no_papermill(name, *a, **k):
        if name.startswith("papermill"):
            raise ModuleNotFoundError("No module named 'papermill'")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_papermill)
    monkeypatch.delitem(sys.modules, "papermill.exceptions", raising=False)
    def boom(*a, **k):
        raise RuntimeError("the real one")

    monkeypatch.setattr(html_report, "compare_files", boom)
    with pytest.raises(RuntimeError, match="the real one"):
        cli.main(["compare", "a:b", "c:d", "--layers-a", "x", "--layers-b", "y", "--data", "cifar10"])


def test_a_failed_compare_leaves_no_empty_output_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["compare", "test_compare_cli:nothing", "test_compare_cli:tiny", "--layers-a", "1", "--layers-b",
                     "1", "--data", "cifar10"]) == 2
    assert not (tmp_path / "compare").exists()


def test_long_work_shows_progress_and_quiet_shows_none(tmp_path, capsys, monkeypatch):
    """Issue 67, finding 7: a timm ResNet-18 pair ran 531 s in silence. The passes over the images
    show bars on the terminal (the task-loss stitches too: tests/test_compare.py); -q shows none."""
    monkeypatch.setenv("STITCHKIT_PROGRESS", "1")
    write_image_tree(tmp_path, "imgs", per_class=8)
    argv = ["compare", "test_compare_cli:tiny", "test_compare_cli:tiny", "--layers-a", "1", "--layers-b", "1",
            "--data", str(tmp_path / "imgs"), "--normalisation", "half", "--images", "24", "--fit-images", "24",
            "--batch", "8", "--measures", "dm", "--resamples", "50"]
    assert cli.main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "direct matching: fit" in err and "measuring" in err
    assert cli.main([*argv, "-q", "--out", str(tmp_path / "c")]) == 0
    assert "measuring" not in capsys.readouterr().err
