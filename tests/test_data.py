import numpy as np
import pytest
import torch
from conftest import tar_tree, write_cifar_pickles, write_image_tree, write_mnist_idx

from stitchkit.data import archives, batches, integrity, splits


def test_cifar_pickles_roundtrip(tmp_path):
    imgs, labs = write_cifar_pickles(tmp_path)
    train = archives.load("cifar10", "train", tmp_path)
    test = archives.load("cifar10", "test", tmp_path)
    assert train.images.shape == (50, 3, 32, 32) and train.images.dtype == torch.uint8
    assert np.array_equal(train.images.numpy(), imgs[:50]) and np.array_equal(test.images.numpy(), imgs[50:])
    assert train.labels.dtype == torch.int64 and train.labels.tolist() == labs[:50].tolist()
    assert train.classes[0] == "airplane"


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_idx(tmp_path, gz):
    imgs, labs = write_mnist_idx(tmp_path, gz=gz)
    train = archives.load("mnist", "train", tmp_path)
    assert train.images.shape == (20, 1, 28, 28)
    assert np.array_equal(train.images.numpy(), imgs[:20])
    assert archives.load("mnist", "test", tmp_path).labels.tolist() == labs[20:].tolist()


def test_image_folder_and_tar_agree(tmp_path):
    expected = write_image_tree(tmp_path / "tree", "cifar10")
    folder = archives.load("cifar10", "train", tmp_path / "tree")
    # classes sort alphabetically into labels; images decoded exactly (PNG is lossless)
    assert folder.classes == ("ant", "cat", "dog")
    assert np.array_equal(folder.images[0].numpy(), expected[("train", "ant", 0)])
    assert folder.labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    (tmp_path / "archive").mkdir()
    tar_tree(tmp_path / "tree", "cifar10", tmp_path / "archive" / "cifar10-images.tar.gz")
    archives._LOADED.clear()
    tarred = archives.load("cifar10", "test", tmp_path / "archive")
    assert np.array_equal(tarred.images.numpy(), archives.load("cifar10", "test", tmp_path / "tree").images.numpy())


def test_greyscale_tree(tmp_path):
    write_image_tree(tmp_path, "mnist", classes=("0", "1"), channels=1)
    assert archives.load("mnist", "train", tmp_path).images.shape == (6, 1, 8, 8)


def test_decoded_once_into_cache(tmp_path, monkeypatch):
    write_cifar_pickles(tmp_path)
    archives.load("cifar10", "train", tmp_path)
    archives._LOADED.clear()
    monkeypatch.setattr(archives, "_decode_cifar_pickles", lambda *a: pytest.fail("decoded twice"))
    assert len(archives.load("cifar10", "train", tmp_path)) == 50


def test_corrupt_decode_cache_is_rebuilt(tmp_path):
    write_cifar_pickles(tmp_path)
    first = archives.load("cifar10", "train", tmp_path)
    archives._LOADED.clear()
    cached = archives._cache_file("cifar10", "train", tmp_path / "cifar-10-batches-py")  # this test's, not another's
    assert cached.exists()
    cached.write_bytes(cached.read_bytes()[:100])
    with pytest.warns(UserWarning, match="corrupt") as warned:
        assert torch.equal(archives.load("cifar10", "train", tmp_path).images, first.images)
    assert str(cached) in str(warned[0].message)


def test_missing_data_lists_where_it_looked(tmp_path):
    with pytest.raises(integrity.DataNotFoundError) as err:
        archives.load("cifar10", "train", tmp_path)
    msg = str(err.value)
    assert "cifar-10-batches-py" in msg and "cifar10-images.tar.gz" in msg and "STITCHKIT_DATA_ROOT" in msg


def test_unknown_dataset_and_split():
    with pytest.raises(ValueError, match="valid: cifar10, mnist"):
        archives.load("imagenet")
    with pytest.raises(ValueError, match="valid: train, test"):
        archives.load("cifar10", "val")


def test_data_root_from_environment(tmp_path, monkeypatch):
    write_cifar_pickles(tmp_path)
    monkeypatch.setenv("STITCHKIT_DATA_ROOT", str(tmp_path))
    assert len(archives.load("cifar10", "test")) == 20


def test_stratified_subset_is_balanced_and_seeded():
    labels = torch.arange(1000) % 10
    idx = splits.stratified_subset(labels, 95, seed=3)
    counts = labels[idx].bincount()
    assert idx.numel() == 95 and counts.max() - counts.min() <= 1 and idx.unique().numel() == 95
    assert torch.equal(idx, splits.stratified_subset(labels, 95, seed=3))
    assert not torch.equal(idx, splits.stratified_subset(labels, 95, seed=4))
    with pytest.raises(ValueError, match="1..1000"):
        splits.stratified_subset(labels, 0)


def test_label_transforms():
    labels = torch.arange(10)
    assert splits.remap_labels(labels, splits.OBJECTS_VS_ANIMALS).tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 1, 1]
    with pytest.raises(ValueError, match="no entry"):
        splits.remap_labels(labels, {0: 0})
    many = torch.arange(10_000) % 10
    noisy = splits.randomise_labels(many, 0.5, 10, seed=0)
    changed = (noisy != many).float().mean().item()
    assert 0.40 < changed < 0.50  # half replaced, 1/10 of those by the same class
    assert torch.equal(splits.randomise_labels(many, 0.0, 10), many)


def test_normalisation_recipes():
    x = torch.full((2, 3, 4, 4), 255, dtype=torch.uint8)
    out = batches.normalise(x, "half")
    assert torch.allclose(out, torch.ones_like(out))
    assert torch.equal(batches.normalise(x, "none"), torch.ones(2, 3, 4, 4))
    with pytest.raises(ValueError, match="valid: cifar"):
        batches.normalise(x, "imagenet21k")
    with pytest.raises(ValueError, match="channels"):
        batches.normalise(x, "mnist")


def test_crop_flip_matches_per_image_reference():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (16, 3, 8, 8), dtype=torch.uint8)
    out = batches.random_crop_flip(x, torch.Generator().manual_seed(1), pad=2)
    # recompute the same draws and crop image by image
    g = torch.Generator().manual_seed(1)
    oy = torch.randint(0, 5, (16,), generator=g)
    ox = torch.randint(0, 5, (16,), generator=g)
    mirror = torch.rand(16, generator=g) < 0.5
    padded = torch.nn.functional.pad(x, (2, 2, 2, 2))
    for i in range(16):
        ref = padded[i, :, oy[i]:oy[i] + 8, ox[i]:ox[i] + 8]
        if mirror[i]:
            ref = ref.flip(-1)
        assert torch.equal(out[i], ref)


def test_batches_cover_the_split_and_are_seeded(tiny_split):
    b = batches.Batches(tiny_split, 10, normalisation="cifar", shuffle=True, seed=0)
    ys = torch.cat([y for _, y in b])
    assert len(b) == 7 and sorted(ys.tolist()) == sorted(tiny_split.labels.tolist())
    again = torch.cat([y for _, y in batches.Batches(tiny_split, 10, normalisation="cifar", shuffle=True, seed=0)])
    assert torch.equal(ys, again)
    x, _ = next(iter(batches.Batches(tiny_split, 8, normalisation="cifar", augment=True, channels_last=True)))
    assert x.dtype == torch.float32 and x.is_contiguous(memory_format=torch.channels_last)
