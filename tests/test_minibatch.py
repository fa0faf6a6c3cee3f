"""Minibatch CKA (unbiased HSIC per minibatch) and compare's memory bound (issue 49)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import stitchkit
from stitchkit.measures.minibatch import MinibatchCKA, gram, hsic1


def _cka(x: torch.Tensor, y: torch.Tensor, batch: int) -> float:
    acc = MinibatchCKA()
    for s in range(0, len(x), batch):
        acc.update({"a": gram(x[s:s + batch])}, {"b": gram(y[s:s + batch])})
    return float(acc.replicates("a", "b", resamples=10)[0])


def _unbiased_hsic_by_definition(k: np.ndarray, l: np.ndarray) -> float:
    """Song et al.'s U-statistic written out over index quadruples' terms (small m only)."""
    m = len(k)
    k, l = k.copy(), l.copy()
    np.fill_diagonal(k, 0)
    np.fill_diagonal(l, 0)
    ones = np.ones(m)
    return float((np.trace(k @ l) + ones @ k @ ones * (ones @ l @ ones) / ((m - 1) * (m - 2))
                  - 2 / (m - 2) * ones @ k @ l @ ones) / (m * (m - 3)))


def test_hsic1_is_song_et_als_estimator_and_cka_its_ratio():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(9, 5, generator=g, dtype=torch.float64), torch.randn(9, 3, generator=g, dtype=torch.float64)
    k, l = (x @ x.T).numpy(), (y @ y.T).numpy()
    assert hsic1(gram(x), gram(y)) == pytest.approx(_unbiased_hsic_by_definition(k, l), rel=1e-10)
    with pytest.raises(ValueError, match="at least 4"):
        hsic1(gram(x[:3]), gram(y[:3]))


@pytest.mark.parametrize("batch", [50, 100, 400])
def test_minibatch_cka_properties(batch):
    """1 for a representation against itself; invariant to an orthogonal map and to isotropic
    scaling of either side; in [0, 1] up to noise; near 0 for independent representations."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(400, 20, generator=g, dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.randn(20, 20, generator=g, dtype=torch.float64))
    y = x @ torch.randn(20, 12, generator=g, dtype=torch.float64) + 0.5 * torch.randn(400, 12, generator=g,
                                                                                       dtype=torch.float64)
    assert _cka(x, x, batch) == pytest.approx(1.0, abs=1e-12)
    base = _cka(x, y, batch)
    assert _cka(x @ q, y, batch) == pytest.approx(base, rel=1e-9)
    assert _cka(3.0 * x, 0.1 * y, batch) == pytest.approx(base, rel=1e-9)
    assert 0.3 < base <= 1.0
    assert abs(_cka(x, torch.randn(400, 12, generator=g, dtype=torch.float64), batch)) < 0.1


def test_images_as_a_dataloader_give_what_the_tensor_gives():
    g = torch.Generator().manual_seed(2)
    images, labels = torch.randn(200, 3, 8, 8, generator=g), torch.randint(0, 10, (200,), generator=g)
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                            torch.nn.Flatten(), torch.nn.Linear(6, 10))
    kw = dict(measures=("cka", "dm", "dm_accuracy"), batch_size=50)
    a = stitchkit.compare(m, m, ["1"], ["1", "4"], images[100:], labels[100:], fit_images=images[:100],
                          fit_labels=labels[:100], **kw)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[100:], labels[100:]), batch_size=50)
    fit = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[:100], labels[:100]), batch_size=50)
    b = stitchkit.compare(m, m, ["1"], ["1", "4"], loader, fit_images=fit, **kw)
    assert a.drop(columns="note").equals(b.drop(columns="note"))


def _peak_mb(n: int, measures: tuple[str, ...]) -> float:
    script = textwrap.dedent(f"""
        import resource, torch, stitchkit
        torch.manual_seed(0)
        def net():
            return torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
                                       torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(),
                                       torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10))
        a, b = net(), net()
        images = torch.randn({n}, 3, 16, 16)
        labels = torch.randint(0, 10, ({n},))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        stitchkit.compare(a, b, ["1", "3"], ["1", "3"], images, labels, measures={measures!r}, batch_size=200)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def test_compare_memory_does_not_grow_with_the_images():
    """CKA and direct matching hold one batch at a time: 16x the images, about the same peak (the
    images themselves, 24 MB, aside). A full-sample Gram of 8,000 images alone is 512 MB in
    float64, and the four layers' activations 262 MB in float32: what compare held before."""
    small, large = _peak_mb(500, ("cka", "dm")), _peak_mb(8000, ("cka", "dm"))
    assert large - small < 100, (small, large)


def test_direct_matching_into_a_larger_map_is_fitted_without_making_the_resized_rows():
    """The normal equations of A's map resized up to B's size, from A's positions through the
    resize matrix, equal those of the resized rows; so do the map's outputs, map then resize."""
    from stitchkit.base.linalg import NormalEquations
    from stitchkit.comparing import compare

    g = torch.Generator().manual_seed(3)
    ha = torch.randn(6, 5, 4, 4, generator=g, dtype=torch.float64)
    hb = torch.randn(6, 3, 8, 8, generator=g, dtype=torch.float64)
    explicit, implicit = NormalEquations(bias=True), NormalEquations(bias=True)
    explicit.update(compare._rows(compare._match(ha, hb)), compare._rows(hb))
    compare._update_upsampled(implicit, ha, hb)
    assert implicit.n == explicit.n == 6 * 64
    assert torch.allclose(implicit.xtx, explicit.xtx, rtol=1e-10, atol=1e-9)
    assert torch.allclose(implicit.xty, explicit.xty, rtol=1e-10, atol=1e-9)
    w, b = explicit.solve()
    stitch = compare._map_of(implicit, hb[:1])
    resized_first = torch.einsum("nchw,cd->ndhw", compare._match(ha, hb).double(), w) + b[None, :, None, None]
    assert torch.allclose(stitch(ha).double(), resized_first, atol=1e-5)
