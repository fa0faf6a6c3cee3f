"""The stitching controls of the ResNet-18 pages (issue 46; :mod:`stitchkit.controls`), built on
stitch tables in one long form: one row per initialisation, sender, receiver and cut with the
stitched accuracy, the receiver's own (``baseline``) and the per-image results behind both.

- *Positive* (:func:`positive_control`): a receiver stitched into itself with the page's recipe
  loses at most 1 point at its worst cut (the basic interval's upper end, over the test images:
  the control is about these networks). A gain is reported (:func:`gain_numbers`), never gated.
- *Negative* (:func:`negative_control`): an untrained ResNet-18 (the same architecture, seed k
  for initialisation k, its BatchNorm statistics recalibrated) stitched into the claim's receiver
  at the last two cuts with the page's recipe stays at least 20 points below the receiver's
  self-stitch there (mean over the two cuts and the initialisations; a t interval over the
  initialisations, the untrained senders being different networks).

:func:`late_rows` stitches the negative control's rows: the untrained sender and the receiver
itself at the last two cuts (the self-stitches are cache hits where the page already has them).
"""

from __future__ import annotations

import pandas as pd

from ... import controls, noise
from ...datasets import DataSpec
from ...grid import stitch_grid
from ...grid_spec import Net
from ...results import Control
from ...store import Store
from .config import CUTS, SETS, UNTRAINED, StitchConfig
from .measures import ACC, recipe_net

LATE = CUTS[-controls.NEGATIVE_CUTS:]  # the negative control's cuts: the last two


def long_rows(t: pd.DataFrame, init: int) -> pd.DataFrame:
    """A :func:`stitchkit.grid.stitch_grid` table in the long form of this module."""
    return pd.DataFrame({"init": init, "sender": t.sender, "receiver": t.receiver, "cut": t.cut_i,
                         "accuracy": t.accuracy, "baseline": t.receiver_accuracy, "correct": t.correct,
                         "baseline_correct": t.receiver_correct})


def self_rows(cfg: StitchConfig, scale: str, receiver: str, data: str, cuts=CUTS, *, factor: float = 1,
              store: Store | None = None, device=None) -> pd.DataFrame:
    """``receiver`` stitched into itself at ``cuts`` with the page's recipe, trained and tested on
    ``data`` (a name of :data:`SETS`), every initialisation."""
    store = store or Store()
    frames = []
    for k in range(cfg.inits):
        net = recipe_net(cfg, scale, receiver, k)
        recipe = cfg.recipe(k) if factor == 1 else cfg.recipe(k).longer(factor)
        frames.append(long_rows(stitch_grid([net], [net], [(c, c) for c in cuts], recipe, DataSpec(SETS[data]),
                                            store=store, device=device, progress=False), k))
    return pd.concat(frames, ignore_index=True)


def late_rows(cfg: StitchConfig, scale: str, receiver: str, data: str, *, store: Store | None = None,
              device=None) -> pd.DataFrame:
    """The negative control's stitches: an untrained ResNet-18 (:meth:`StitchConfig.untrained`,
    its BN statistics recalibrated on ``data``) and ``receiver`` itself, each stitched into
    ``receiver`` at the last two cuts with the page's recipe, trained and tested on ``data``,
    every initialisation (initialisation k: the untrained network of seed k)."""
    store = store or Store()
    frames = []
    for k in range(cfg.inits):
        net = recipe_net(cfg, scale, receiver, k)
        untrained = Net(UNTRAINED, cfg.untrained(scale, k, data))
        frames.append(long_rows(stitch_grid([untrained, net], [net], [(c, c) for c in LATE], cfg.recipe(k),
                                            DataSpec(SETS[data]), store=store, device=device, progress=False), k))
    return pd.concat(frames, ignore_index=True)


def _own(t: pd.DataFrame, receiver: str) -> pd.DataFrame:
    return t[(t.sender == receiver) & (t.receiver == receiver)]


def self_penalties(t: pd.DataFrame, receiver: str) -> pd.Series:
    """Per cut, the receiver minus its self-stitch (mean over initialisations, points; positive:
    the self-stitch loses accuracy)."""
    g = _own(t, receiver).groupby("cut", sort=False)
    return 100 * (g.baseline.mean() - g.accuracy.mean())


def positive_control(t: pd.DataFrame, receivers, *, what: str = "",
                     sample: str | None = None) -> tuple[Control, noise.Estimate]:
    """The positive control over ``receivers`` (names; each stitched into itself in ``t``): the
    largest self-penalty over receivers and cuts, bootstrapped over the test images as a maximum
    (the basic interval), its upper end ≤ 1 point. ``t``'s rows share one test set, or
    ``sample`` names the column of each row's test set."""
    receivers = list(receivers)

    def stat(u: pd.DataFrame) -> float:
        return max(controls.largest(self_penalties(u, r)) for r in receivers)

    own = pd.concat([_own(t, r) for r in receivers], ignore_index=True)
    e = noise.bootstrap_table(own, stat, columns=ACC, interval="basic", sample=sample)
    what = what or f"{' and '.join(receivers)} stitched into {'itself' if len(receivers) == 1 else 'themselves'}"
    return controls.reaches_receiver(e, what=what), e


def beyond_self_late(t: pd.DataFrame, receiver: str) -> float:
    """The untrained sender's penalty beyond the self-stitch at the cuts it was stitched at (the
    last two): the mean over them of (self-stitched minus untrained-stitched accuracy, means over
    initialisations), points."""
    rows = t[t.receiver == receiver]
    own = _own(rows, receiver).groupby("cut").accuracy.mean()
    untr = rows[rows.sender == UNTRAINED].groupby("cut").accuracy.mean()
    cuts = [c for c in untr.index if c in own.index]
    return 100 * float((own[cuts] - untr[cuts]).mean())


def negative_control(t: pd.DataFrame, receivers, *, what: str = "",
                     sample: str | None = None) -> tuple[Control, noise.Estimate | None]:
    """The negative control over ``receivers`` (the smallest over them of :func:`beyond_self_late`),
    on ``t`` (:func:`late_rows`: one test set, or ``sample`` names the column of each row's), its
    interval over the test images and the initialisations (a t interval over few: the untrained
    senders are different networks). Without untrained rows: a failed control, not run."""
    receivers = list(receivers)
    rows = t[t.receiver.isin(receivers)]
    if rows[rows.sender == UNTRAINED].empty:
        return not_run(controls.NEGATIVE, "an untrained sender stitched into the receiver at the last two cuts"), None
    e = noise.bootstrap_table(rows, lambda u: min(beyond_self_late(u, r) for r in receivers), groups="init",
                              columns=ACC, sample=sample)
    what = what or (f"an untrained ResNet-18 stitched into {' and into '.join(receivers)} at "
                    f"{', '.join(LATE)} with the page's recipe")
    return controls.untrained_sender_fails(e, what=what), e


def not_run(kind: str, text: str) -> Control:
    """A control the claim's kind needs that this run did not make: failed (the claim cannot be
    decided without it)."""
    return Control(f"{text}: not run", f"the {kind} control is required for this claim's kind", "not run", False,
                   None, kind)


def gain_numbers(prefix: str, t: pd.DataFrame, receivers) -> dict[str, float]:
    """The self-stitch gain, reported and gated nowhere (:func:`stitchkit.controls.gain_numbers`)
    over ``receivers``' self-penalties at every cut in ``t``."""
    pens = pd.concat([self_penalties(t, r) for r in receivers])
    return controls.gain_numbers(prefix, pens.to_numpy())
