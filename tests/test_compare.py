"""stitchkit.compare on networks that are not in the registry: hand-written modules, named cuts."""

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

import stitchkit
from stitchkit.comparison import CutNotFoundError, StitchError


def small_cnn(width: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, stride=2, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, 10))


class Tower(nn.Module):
    """A model with named submodules, as a user's would have."""

    def __init__(self, seed: int):
        super().__init__()
        torch.manual_seed(seed)
        self.features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(6, 12, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Linear(12, 10)

    def forward(self, x):
        return self.head(self.down(self.features(x)).mean(dim=(2, 3)))


@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(0)
    images = torch.randn(240, 3, 8, 8, generator=g)
    labels = torch.randint(0, 10, (240,), generator=g)
    return images, labels


def test_a_network_against_itself_is_identical_by_every_measure(data):
    images, labels = data
    m = small_cnn(8, 0)
    t = stitchkit.compare(m, m, ["1", "3"], ["1", "3"], images, labels)
    assert list(t.columns) == ["layer_a", "layer_b", "measure", "value", "low", "high", "n_images", "note"]
    same = t[t.layer_a == t.layer_b].set_index(["layer_a", "measure"]).value
    for layer in ("1", "3"):
        assert same[(layer, "cka")] == pytest.approx(1.0, abs=1e-9)
        assert same[(layer, "procrustes")] == pytest.approx(0.0, abs=1e-6)
        assert same[(layer, "dm")] == pytest.approx(0.0, abs=1e-6)
        assert same[(layer, "dm_accuracy")] == pytest.approx(1.0, abs=1 / 120)  # the identity stitch: B's accuracy
    cka = t[(t.measure == "cka")]
    assert ((cka.low <= cka.value + 1e-12) & (cka.value <= cka.high + 1e-12)).all() and (t.n_images == 120).all()
    assert t[t.measure == "pwcca"].low.isna().all()  # not resampled: says so


def test_two_unregistered_networks_of_different_shapes(data):
    images, labels = data
    a, b = small_cnn(8, 1), Tower(2)
    t = stitchkit.compare(a, b, ["1", "3"], ["features", "down.1"], images, labels,
                          measures=("cka", "dm", "dm_accuracy"))
    assert len(t) == 2 * 2 * 3 and t.value.notna().all()
    # the stitch from A's 8x8 map into B's 4x4 one resizes; from B's point of view its own accuracy is the unit
    acc = t[t.measure == "dm_accuracy"]
    assert (acc.value >= 0).all() and (acc.low <= acc.high).all()


def test_bad_inputs_name_the_value_and_the_choices(data):
    images, labels = data
    m = Tower(0)
    with pytest.raises(CutNotFoundError, match=r"no module 'feature' in model A; valid: features, features.0"):
        stitchkit.compare(m, m, ["feature"], ["down"], images, labels)
    with pytest.raises(CutNotFoundError, match="in model B"):
        stitchkit.compare(m, m, ["features"], ["downn"], images, labels)
    with pytest.raises(ValueError, match="unknown measure.*'cca'.*valid: cka, pwcca"):
        stitchkit.compare(m, m, ["features"], ["down"], images, labels, measures=("cca",))
    with pytest.raises(ValueError, match="needs labels"):
        stitchkit.compare(m, m, ["features"], ["down"], images)


def test_a_cut_that_cannot_be_stitched_is_named(data):
    images, labels = data
    m = Tower(0)
    # B's flat head input cannot take A's conv map as a map: pooled, it can; a token layer of another length cannot
    t = stitchkit.compare(m, m, ["down"], ["head"], images, labels, measures=("dm", "dm_accuracy"))
    assert t.value.notna().all()  # A's map pooled to a vector, mapped onto the head's output (10 logits)

    class Twice(nn.Module):  # a module called twice per forward pass cannot be a cut
        def __init__(self):
            super().__init__()
            self.block = nn.Conv2d(3, 3, 1)
            self.head = nn.Linear(3, 10)

        def forward(self, x):
            return self.head(self.block(self.block(x)).mean(dim=(2, 3)))

    with pytest.raises(StitchError, match="'block' ran 2 times"):
        stitchkit.compare(Twice(), Twice(), ["block"], ["block"], images, labels, measures=("cka",))
