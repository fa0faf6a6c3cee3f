"""``stitchkit compare`` on a user's own data (``--data module:callable``), with ``--resize`` and a
normalisation per model (issue 67, "`stitchkit compare` a researcher can trust on their own models")."""

import json
from collections import Counter

import pytest
import torch
from conftest import write_image_tree
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from stitchkit import cli

SPEC = "test_compare_data"  # this module, as the command line imports it (the tests folder is on the path)

# --------------------------------------------------------------------------------------------
# Data callables, called with the split name as the command calls them


def _images(split: str, per_class: int = 12, classes: int = 3):
    """Random images on the [0, 1] scale, stored class by class (0 0 0 ... 1 1 1 ... 2 2 2)."""
    g = torch.Generator().manual_seed({"train": 0, "test": 1}[split])
    return torch.rand(classes * per_class, 3, 8, 8, generator=g), torch.arange(classes).repeat_interleave(per_class)


def sorted_data(split):
    return TensorDataset(*_images(split))


def loader_data(split):
    return DataLoader(sorted_data(split), batch_size=5)


def shuffled_loader(split):
    return DataLoader(sorted_data(split), batch_size=5, shuffle=True)


def one_split_for_both(split):
    return sorted_data("train")


def normalised_already(split):
    x, y = _images(split)
    return TensorDataset((x - 0.5) / 0.25, y)


def mixed_sizes(split):
    g = torch.Generator().manual_seed(len(split))
    return [(torch.rand(3, 8 + 2 * (i % 2), 8, generator=g), i % 3) for i in range(12)]


def a_tensor(split):
    return _images(split)[0]


def nothing(split):
    return None


def uint8_items(split):
    return [(torch.zeros(3, 8, 8, dtype=torch.uint8), 0)]


def text_labels(split):
    return [(torch.rand(3, 8, 8), "cat")]


class _BrokenAtFive(torch.utils.data.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 5:
            raise OSError("cannot read image 5")
        return torch.rand(3, 8, 8), i % 3


def broken_items(split):
    return _BrokenAtFive()


def batch_text_labels(split):
    return [(torch.rand(4, 3, 8, 8), ["cat"] * 4)]


def raises(split):
    raise RuntimeError("no such split here")


def takes_nothing():
    return sorted_data("train")


# --------------------------------------------------------------------------------------------
# Tiny models whose first module records what they are given

RECORDS: dict[str, list[torch.Tensor]] = {}


class Record(nn.Module):
    """Passes its input on and keeps a copy under ``tag``: what the model was given."""

    def __init__(self, tag: str):
        super().__init__()
        self.tag = tag

    def forward(self, x):
        RECORDS.setdefault(self.tag, []).append(x.detach().clone())
        return x


def probe(tag: str = "A") -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(Record(tag), nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(6, 3))


@pytest.fixture(autouse=True)
def _fresh_records():
    RECORDS.clear()
    yield
    RECORDS.clear()


def compare_argv(out, data=f"{SPEC}:sorted_data", *extra, images="12", fit="12"):
    return ["compare", f"{SPEC}:probe", f"{SPEC}:probe", "--kwargs-a", '{"tag": "A"}', "--kwargs-b", '{"tag": "B"}',
            "--layers-a", "2", "--layers-b", "2", "--data", data, "--images", images, "--fit-images", fit,
            "--batch", "8", "--measures", "cka", "--resamples", "20", "-q", "--out", str(out), *extra]


@pytest.fixture
def seen(monkeypatch):
    """What the comparison was given: the measured and fit images and labels (the real compare runs)."""
    from stitchkit.comparing import compare

    got = {}
    real = compare.compare

    def spy(a, b, cuts_a, cuts_b, images, labels, **kw):
        got.update(x=images, y=labels, fit_x=kw["fit_images"], fit_y=kw["fit_labels"], a=a, b=b)
        return real(a, b, cuts_a, cuts_b, images, labels, **kw)

    monkeypatch.setattr(compare, "compare", spy)
    return got


def _rows(x):
    return {tuple(img.flatten().tolist()) for img in x}


# --------------------------------------------------------------------------------------------
# --data module:callable


def test_a_users_class_sorted_dataset_gives_balanced_disjoint_seeded_samples(tmp_path, seen):
    assert cli.main(compare_argv(tmp_path / "out", f"{SPEC}:sorted_data", "--normalisation", "none")) == 0
    x, y, fit_x, fit_y = seen["x"], seen["y"], seen["fit_x"], seen["fit_y"]
    assert Counter(y.tolist()) == {0: 4, 1: 4, 2: 4} and Counter(fit_y.tolist()) == {0: 4, 1: 4, 2: 4}
    assert y[:4].unique().numel() > 1 and fit_y[:4].unique().numel() > 1  # a mixed order, not class blocks
    test_x, test_y = _images("test")
    train_x, _ = _images("train")
    assert _rows(x) <= _rows(test_x) and _rows(fit_x) <= _rows(train_x)  # measured from 'test', fitted on 'train'
    assert not _rows(x) & _rows(fit_x) and len(_rows(x)) == 12
    for img, label in zip(x, y):  # every image keeps its own label
        assert test_y[(test_x == img).flatten(1).all(1)].tolist() == [label]
    from stitchkit.comparing.inputs import sample_images

    again, again_y = sample_images(f"{SPEC}:sorted_data", "test", 12)
    assert torch.equal(again, x) and torch.equal(again_y, y)  # seeded
    other = sample_images(f"{SPEC}:sorted_data", "test", 12, seed=1)[0]
    assert not torch.equal(other, x)
    s = json.loads((tmp_path / "out" / "results.json").read_text())["settings"]
    assert s["data"] == f"{SPEC}:sorted_data" and s["images"] == 12 and s["normalisation"] == "none"


def test_a_dataloader_gives_the_same_samples_as_its_dataset(tmp_path, seen):
    from stitchkit.comparing.inputs import sample_images

    for split in ("train", "test"):
        x, y = sample_images(f"{SPEC}:loader_data", split, 12)
        ref_x, ref_y = sample_images(f"{SPEC}:sorted_data", split, 12)
        assert torch.equal(x, ref_x) and torch.equal(y, ref_y)
    assert cli.main(compare_argv(tmp_path / "out", f"{SPEC}:loader_data", "--normalisation", "none")) == 0
    assert Counter(seen["y"].tolist()) == {0: 4, 1: 4, 2: 4} and not _rows(seen["x"]) & _rows(seen["fit_x"])


@pytest.mark.parametrize("callable_, message", [
    ("a_tensor", f"--data '{SPEC}:a_tensor' returned a float32 tensor of shape (36, 3, 8, 8) for 'test'; expected a "
                 "torch Dataset of (image, label) items or a DataLoader"),
    ("nothing", f"--data '{SPEC}:nothing' returned None for 'test'; expected a torch Dataset"),
    ("raises", f"--data '{SPEC}:raises' raised RuntimeError when called with 'test': no such split here"),
    ("takes_nothing", f"--data '{SPEC}:takes_nothing' raised TypeError when called with 'test'"),
    ("uint8_items", f"element 0 of --data '{SPEC}:uint8_items' ('test'): its image is a uint8 tensor of shape "
                    "(3, 8, 8); expected (image, label), the image a float tensor (C, H, W)"),
    ("text_labels", f"element 0 of --data '{SPEC}:text_labels' ('test'): its label is a str; expected"),
    ("batch_text_labels", f"element 0 of --data '{SPEC}:batch_text_labels' ('test'): a batch of 4 images whose "
                          "labels are a list of 4; expected"),
    ("broken_items", f"reading item 5 of --data '{SPEC}:broken_items' ('test') raised OSError: cannot read image 5"),
    ("shuffled_loader", "returned a DataLoader that shuffles for 'test'"),
    ("mixed_sizes", "holds images of different shapes ((3, 8, 8), (3, 10, 8)): give --resize H W"),
    ("one_split_for_both", "of the 12 measured images ('test') are also among the 12 fit images ('train'): its two "
                           "splits overlap"),
    ("SPEC", f"--data '{SPEC}:SPEC' names a str, not a callable that returns a data set"),
    ("absent", f"cannot load --data '{SPEC}:absent'"),
])
def test_bad_user_data_is_one_line_naming_the_spec_before_any_compute(callable_, message, tmp_path, monkeypatch,
                                                                      capsys):
    from stitchkit.comparing import compare

    monkeypatch.setattr(compare, "compare", lambda *a, **k: pytest.fail("computed on bad data"))
    assert cli.main(compare_argv(tmp_path / "out", f"{SPEC}:{callable_}", "--normalisation", "none")) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("stitchkit: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_mixed_sizes_are_taken_with_resize():
    from stitchkit.comparing.inputs import sample_images

    x, y = sample_images(f"{SPEC}:mixed_sizes", "test", None, size=(6, 6))
    assert x.shape == (12, 3, 6, 6) and Counter(y.tolist()) == {0: 4, 1: 4, 2: 4}


def test_user_data_must_say_its_normalisation_and_be_on_the_unit_scale_for_one(tmp_path, capsys):
    assert cli.main(compare_argv(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert "is your own data (module:callable): say how the models expect its images normalised" in err
    assert "--normalisation cifar | half | mnist | mnist3 | none | imagenet; none if" in err
    assert cli.main(compare_argv(tmp_path / "out", f"{SPEC}:normalised_already", "--normalisation", "half")) == 2
    err = capsys.readouterr().err
    assert "not on the [0, 1] scale that normalisation 'half' (model A) and 'half' (model B) expects" in err
    assert "pass --normalisation none" in err
    assert cli.main(compare_argv(tmp_path / "out", f"{SPEC}:normalised_already", "--normalisation", "none")) == 0


# --------------------------------------------------------------------------------------------
# --resize


def test_resize_changes_the_shape_the_models_see_for_any_data_source(tmp_path):
    write_image_tree(tmp_path, "imgs", per_class=4)
    for data in (f"{SPEC}:sorted_data", str(tmp_path / "imgs")):
        RECORDS.clear()
        out = tmp_path / f"out{len(data)}"
        assert cli.main(compare_argv(out, data, "--normalisation", "half", "--resize", "12", "10")) == 0
        assert {tuple(t.shape[1:]) for t in RECORDS["A"] + RECORDS["B"]} == {(3, 12, 10)}
        s = json.loads((out / "results.json").read_text())["settings"]
        assert s["resize"] == [12, 10] and s["image_shape"] == [3, 12, 10]
    RECORDS.clear()
    assert cli.main(compare_argv(tmp_path / "plain", f"{SPEC}:sorted_data", "--normalisation", "half")) == 0
    assert {tuple(t.shape[1:]) for t in RECORDS["A"]} == {(3, 8, 8)}


def test_resize_is_bilinear_before_the_normalisation():
    import torch.nn.functional as F

    from stitchkit.comparing.inputs import load_images, sample_images

    raw = sample_images(f"{SPEC}:sorted_data", "test", 6)[0]
    x, _, used = load_images(f"{SPEC}:sorted_data", "test", 6, "half", size=(16, 16))
    expected = F.interpolate(raw, size=(16, 16), mode="bilinear", align_corners=False)  # upsizing: no antialias
    assert used == "half" and torch.allclose(x, (expected - 0.5) / 0.5, atol=1e-6)


def test_layers_takes_user_data_and_resize(capsys):
    assert cli.main(["layers", f"{SPEC}:probe", "--data", f"{SPEC}:sorted_data"]) == 0
    assert any(line.split()[:3] == ["1", "Conv2d", "6x8x8"] for line in capsys.readouterr().out.splitlines())
    assert cli.main(["layers", f"{SPEC}:probe", "--data", f"{SPEC}:loader_data", "--resize", "5", "7"]) == 0
    assert any(line.split()[:3] == ["1", "Conv2d", "6x5x7"] for line in capsys.readouterr().out.splitlines())
    assert cli.main(["layers", f"{SPEC}:probe", "--size", "4", "4"]) == 0  # no --data: 3x32x32 resized
    assert any(line.split()[:3] == ["1", "Conv2d", "6x4x4"] for line in capsys.readouterr().out.splitlines())
    assert cli.main(["layers", f"{SPEC}:probe", "--data", f"{SPEC}:nothing"]) == 2
    assert f"--data '{SPEC}:nothing' returned None" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# A normalisation per model


def test_each_model_gets_its_own_normalisation_and_keeps_its_layer_names(tmp_path, seen):
    from stitchkit.comparing.inputs import sample_images

    out = tmp_path / "out"
    assert cli.main(compare_argv(out, f"{SPEC}:sorted_data", "--normalisation-a", "none",
                                 "--normalisation-b", "half")) == 0
    raw = sample_images(f"{SPEC}:sorted_data", "test", 12)[0]
    assert torch.equal(seen["x"], raw)  # the images kept raw, each model normalising its own
    a_first, b_first = RECORDS["A"][0], RECORDS["B"][0]  # the probe: both models on the same first images
    assert torch.equal(a_first, raw[:len(a_first)]) and torch.allclose(b_first, (a_first - 0.5) / 0.5)
    assert all(t.min() >= 0 for t in RECORDS["A"]) and all(t.min() < 0 for t in RECORDS["B"])
    mean_a = torch.cat(RECORDS["A"]).mean().item()
    assert torch.cat(RECORDS["B"]).mean().item() == pytest.approx(2 * mean_a - 1, abs=1e-5)
    names = [n for n, _ in probe().named_modules()]
    assert [n for n, _ in seen["a"].named_modules()] == names == [n for n, _ in seen["b"].named_modules()]
    assert not seen["a"]._forward_pre_hooks and not seen["b"]._forward_pre_hooks  # removed after
    doc = json.loads((out / "results.json").read_text())
    s = doc["settings"]
    assert (s["normalisation_a"], s["normalisation_b"], s["normalisation"]) == ("none", "half", "per model")
    assert "forward pre-hook" in s["normalised"] and {r["layer_a"] for r in doc["rows"]} == {"2"}


def test_the_same_normalisation_for_both_keeps_the_old_path_and_its_numbers(tmp_path, seen):
    """Both flags naming one normalisation is the old single --normalisation: the images normalised
    once, as stitchkit.data.batches.normalise does, the same numbers."""
    from stitchkit.comparing.inputs import load_images
    from stitchkit.data import batches as data
    from stitchkit.data.archives import image_folder
    from stitchkit.data.splits import stratified_subset

    write_image_tree(tmp_path, "imgs", per_class=8)
    folder = str(tmp_path / "imgs")
    split = image_folder(tmp_path / "imgs", "test")
    idx = stratified_subset(split.labels, 12, 0)
    idx = idx[torch.randperm(len(idx), generator=torch.Generator().manual_seed(1))]
    assert torch.equal(load_images(folder, "test", 12, "half")[0], data.normalise(split.images[idx], "half"))
    rows = []
    for i, flags in enumerate((["--normalisation", "half"], ["--normalisation-a", "half", "--normalisation-b", "half"],
                               ["--normalisation", "cifar", "--normalisation-a", "half", "--normalisation-b", "half"])):
        assert cli.main(compare_argv(tmp_path / f"o{i}", folder, *flags)) == 0
        assert not seen["a"]._forward_pre_hooks and seen["x"].min() < 0  # normalised once, before
        doc = json.loads((tmp_path / f"o{i}" / "results.json").read_text())
        assert doc["settings"]["normalisation"] == "half" and doc["settings"]["normalised"] == "the images, once"
        rows.append([(r["value"], r["low"], r["high"]) for r in doc["rows"]])
    assert rows[0] == rows[1] == rows[2]


def test_normalise_inputs_leaves_names_and_images_alone_and_goes_with_the_untrained_copy():
    from stitchkit.comparing.adapter import untrained_copy
    from stitchkit.comparing.inputs import normalise_inputs
    from stitchkit.data import batches as data

    model = probe("unit")
    names = [n for n, _ in model.named_modules()]
    x = torch.rand(2, 3, 8, 8)
    kept = x.clone()
    handle = normalise_inputs(model, "cifar")
    model(x)
    mean, std = (torch.tensor(v).view(1, 3, 1, 1) for v in data.NORMALISATION["cifar"])
    assert torch.allclose(RECORDS["unit"][-1], (kept - mean) / std, atol=1e-6)
    assert torch.equal(x, kept) and [n for n, _ in model.named_modules()] == names  # no module, no in-place change
    untrained_copy(model)(x)  # the negative control's untrained A normalises as A does
    assert torch.allclose(RECORDS["unit"][-1], RECORDS["unit"][-2])
    handle.remove()
    model(x)
    assert torch.equal(RECORDS["unit"][-1], x)
    assert normalise_inputs(model, "none") is None


@pytest.mark.parametrize("flags, message", [
    (["--normalisation-b", "cifa"], "unknown normalisation 'cifa' (--normalisation-b); valid: cifar, half, mnist, "
                                    "mnist3, none, imagenet"),
    (["--normalisation", "imagnet"], "unknown normalisation 'imagnet' (--normalisation); valid: cifar, half"),
    (["--normalisation-a", "half"], "say how the models expect its images normalised (--normalisation-b or "
                                    "--normalisation cifar | half"),
    (["--normalisation-a", "mnist", "--normalisation-b", "half"], "normalisation 'mnist' (model A) is for "
                                                                  "1-channel images, these have 3; valid for them: "
                                                                  "cifar, half, mnist3, none, imagenet"),
])
def test_a_bad_normalisation_is_refused_naming_the_valid_ones_before_any_compute(flags, message, tmp_path,
                                                                                 monkeypatch, capsys):
    from stitchkit.comparing import compare

    monkeypatch.setattr(compare, "compare", lambda *a, **k: pytest.fail("computed with a bad normalisation"))
    assert cli.main(compare_argv(tmp_path / "out", f"{SPEC}:sorted_data", *flags)) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
