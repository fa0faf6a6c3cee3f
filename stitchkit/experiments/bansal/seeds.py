"""Bansal et al. 2021: the network-to-network variance of the recipe, measured once for the paper
and added to the interval of every claim that compares networks trained differently (issue 46).

Every Bansal page trains one network per role (one receiver, one bottom per sample size, width,
label distribution, ...), so the paired bootstrap over the test images says how sure a number is
*for those networks*, not for the recipe the claim is about. Training more networks per role is
out of reach on 2 CPU cores; instead the spread between networks trained alike is measured once:
:data:`REPLICATES` senders of the recipe (trained identically but for their seed) stitched into
the receiver (seed 0) at the page's cuts, each penalty judged beyond the receiver's self-stitch.
Its standard deviation between the senders, pooled over the cuts (the root of the mean variance),
is the *seed-variance component*: :func:`stitchkit.noise.with_seed_component` widens a claim's
interval by t(k-1) times it (times sqrt 2 where the claim is a difference of two networks).
The receiver is the same in every replicate, so what varies is the sender; the component is
stated on every page that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ... import controls, noise
from ...claims import ClaimSpec
from ...datasets import DataSpec
from ...grid import stitch_grid
from ...grid_spec import LONGER, Net
from ...results import Criterion, criterion
from .common import REPLICATES, SELF, ConnectivityConfig



@dataclass(frozen=True)
class SeedComponent:
    """The recipe's network-to-network spread: ``sd`` (points) from ``k`` replicate senders, and
    the per-cut table it comes from (penalty beyond the self-stitch per sender and cut)."""

    sd: float
    k: int
    table: pd.DataFrame
    unit: str = " points"
    how: str = "stitched into seed 0"

    def text(self) -> str:
        return (f"sd {self.sd:.{2 if self.unit else 3}f}{self.unit} between {self.k} networks trained alike (seeds "
                f"{', '.join(map(str, REPLICATES[:self.k]))} {self.how}, pooled over "
                f"{self.table.cut.nunique()} cuts)")


def seed_component(cfg: ConnectivityConfig, scale: str, cuts=None, *, device=None, store=None,
                   progress: bool = True) -> SeedComponent:
    """Stitch :data:`REPLICATES` senders of ``cfg``'s recipe (and the receiver into itself) into
    the receiver (seed 0) at ``cuts`` (default: every cut) and measure the spread of their
    penalties beyond the self-stitch. Cached like any grid: the pages share it."""
    from ... import zoo

    receiver = Net("receiver", cfg.model(scale, cfg.seeds[0]))
    receiver.model, _ = zoo.load_or_train(receiver.spec, device=device, store=store, progress=progress)
    cuts = list(cuts or receiver.model.cuts)
    senders = [Net(SELF, receiver.spec, receiver.model)] + [Net(f"seed {s}", cfg.model(scale, s)) for s in REPLICATES]
    t = stitch_grid(senders, [receiver], [(c, c) for c in cuts], cfg.recipe(), DataSpec("cifar10"), device=device,
                    store=store, progress=progress)
    t = t.rename(columns={"cut_i": "cut"})
    return component_of(t)


def component_of(t: pd.DataFrame) -> SeedComponent:
    """The pooled spread from a grid table with the self-stitch and ``seed k`` senders."""
    own = t[t.sender == SELF].set_index("cut").penalty
    rows = [{"sender": r.sender, "cut": r.cut, "beyond (points)": 100 * (r.penalty - own[r.cut])}
            for r in t[t.sender != SELF].itertuples()]
    per = pd.DataFrame(rows)
    var = per.groupby("cut", sort=False)["beyond (points)"].var(ddof=1)
    k = int(per.sender.nunique())
    return SeedComponent(float(np.sqrt(var.mean())), k, per)


CKA_COLUMN = "CKA with seed 0"


def cka_seed_component(cfg, scale: str, n_images: int, cuts=None, *, device=None, store=None,
                       progress: bool = True) -> SeedComponent:
    """The recipe's network-to-network spread of a CKA: the linear CKA between the receiver (seed 0)
    and each of :data:`REPLICATES` at ``cuts`` (default: every cut) on ``n_images`` test images,
    its standard deviation between the replicates pooled over the cuts (CKA units). ``cfg``: any
    config with ``variant(scale, seed)`` (B-F7's). The same networks as :func:`seed_component`'s."""
    from ... import zoo
    from .bottoms import cka_per_cut

    receiver = cfg.variant(scale, 0)
    model, _ = zoo.load_or_train(receiver, device=device, store=store, progress=progress)
    cuts = list(cuts or model.cuts)
    rows = [{"sender": f"seed {s}", "cut": cut, CKA_COLUMN: v}
            for s in REPLICATES
            for cut, v in cka_per_cut(receiver, cfg.variant(scale, s), cuts, n_images, device=device, store=store,
                                      progress=progress).items()]
    per = pd.DataFrame(rows)
    var = per.groupby("cut", sort=False)[CKA_COLUMN].var(ddof=1)
    return SeedComponent(float(np.sqrt(var.mean())), int(per.sender.nunique()), per, unit="",
                         how="against seed 0 by linear CKA")


def component_table(c: SeedComponent) -> pd.DataFrame:
    """Per cut (rows) and replicate sender (columns): the penalty beyond the self-stitch (points),
    or the CKA with seed 0 (:func:`cka_seed_component`), and the standard deviation between them."""
    column = CKA_COLUMN if CKA_COLUMN in c.table else "beyond (points)"
    wide = c.table.pivot_table(index="cut", columns="sender", values=column, sort=False)
    wide["sd between networks"] = wide.std(axis=1, ddof=1)
    return wide.round(3 if column == CKA_COLUMN else 2)


def widen(claims: list[ClaimSpec], c: SeedComponent, networks: dict[str, int],
          bounds: tuple[float, float] | None = None) -> list[ClaimSpec]:
    """``claims`` with the criterion of each key of ``networks`` judged on its interval widened by
    the seed-variance component (``networks[key]``: how many independently trained networks the
    claim's number is a difference of). The criterion's text, threshold and direction stay; the
    claim's training-length control is judged again like for like, its longer run's interval
    widened the same way; ``ours`` gains the widened interval. ``bounds``: the range the number
    cannot leave (a CKA's (0, 1)), where a widened interval is cut."""
    out = []
    for claim in claims:
        n = networks.get(claim.key)
        if n is None or claim.criterion.value is None or claim.criterion.low is None:
            out.append(claim)
            continue
        wide = _widened(claim.criterion.fields(), claim.criterion.text, c, n, bounds)
        kept = []
        for k in claim.controls:
            if k.kind == controls.LENGTH and k.record and k.record.get("value") is not None:
                longer = _widened(k.record, claim.criterion.text, c, n, bounds)
                k = controls.training_length(wide, longer, LONGER, what=k.text)
            kept.append(k)
        ours = f"{claim.ours}; with the network-to-network variance {wide.describe_value(2)}"
        out.append(replace(claim, criterion=wide, controls=tuple(kept), ours=ours))
    return out


def _widened(fields, text: str, c: SeedComponent, n: int, bounds: tuple[float, float] | None = None) -> Criterion:
    """The criterion of ``fields`` (a claim's or a length control's record) on its interval widened
    by ``c`` for ``n`` networks."""
    base = noise.Estimate(fields["value"], fields["low"], fields["high"], fields.get("n_test"),
                          fields.get("n_seeds") or 1, _method(fields.get("interval") or ""))
    e = noise.with_seed_component(base, c.sd, c.k, networks=n, what=c.text(), bounds=bounds)
    return criterion(e, fields["threshold"], fields["direction"], text, fields.get("unit") or "", fields.get("tolerance"))


def _method(interval: str) -> str:
    """The method named in a criterion's interval text (``95% <method> interval (...)``)."""
    text = interval or "paired bootstrap"
    if text.startswith("95% ") and " interval (" in text:
        return text[4:text.index(" interval (")]
    return text


# The claims of each page judged with the component, and how many independently trained networks
# each one's number is a difference of (the ResNet-18 pages; the other architectures of B-F2A, the
# ResNet-164s of B-F8 and B-F9's accuracies are not the recipe it was measured on, and the untrained
# bottom's claims are about an untrained network: their intervals cover the test images only)
SEED_CLAIMS: dict[str, dict[str, int]] = {
    "B-F2A": {"connected": 1},
    "B-F2C": {"compatible": 1, "improves": 1, "early_similar": 1, "mid_degrades": 2},
    "B-F3A": {"first_half": 1, "except_noise": 1},
    "B-F3B": {"compatible": 1, "improves": 1, "early_first": 1},
    "B-F3C": {"wider_improves": 1, "not_vice_versa": 1},
    "B-F6": {"connected": 1},
}
# B-F7's CKAs (cka_seed_component): each is between two networks trained differently, both of whose
# seeds vary, so each is widened as a difference of two networks
CKA_SEED_CLAIMS: dict[str, int] = {"samples_far": 2, "width_range": 2, "length_similar": 2}


def with_seeds(figure_id: str, cfg: ConnectivityConfig, scale: str, claims: list[ClaimSpec], **kw
               ) -> tuple[dict[str, float], list[ClaimSpec]]:
    """A page's claims of :data:`SEED_CLAIMS` judged with the seed-variance component (measured,
    or read from the cache), and the numbers the page states it with (``seed_sd``, ``seed_k``)."""
    c = seed_component(cfg, scale, **kw)
    return {"seed_sd": c.sd, "seed_k": c.k}, widen(claims, c, SEED_CLAIMS[figure_id])
