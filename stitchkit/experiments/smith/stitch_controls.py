"""The stitching controls of the ResNet-18 pages (issue 46; :mod:`stitchkit.verdicts.controls`), built on
stitch tables in one long form: one row per initialisation, sender, receiver and cut with the
stitched accuracy, the receiver's own (``baseline``) and the per-image results behind both.

- *Positive* (:func:`positive_control_over_inits`): a receiver stitched into itself with the
  page's recipe loses at most 1 point at its worst cut (the basic interval's upper end, over the
  test images: the control is about these networks). A gain is reported
  (:func:`gain_numbers_over_inits`), never gated.
- *Negative* (:func:`negative_control_over_inits`), since the amendment of 2026-12-02 (issue 68): what the
  stitch can do *without the sender's information*. Label-free noise (:data:`LABEL_FREE`: the
  Clustered-Noise sender's noise around one base for every class, so it carries no label
  information) stitched into the claim's receiver at the last two cuts with the noise sender's
  recipe stays at least 20 points below the receiver's self-stitch there (mean over the two cuts
  and the initialisations; a t interval over the initialisations). Until the amendment the gate
  was an untrained ResNet-18 (seed k, BatchNorm recalibrated): on Correlated data the colour
  reaches the receiver through any sender, which is the shortcut the paper is about, so that gate
  tested the opposite of the paper's thesis and could never pass where the thesis holds. The
  untrained sender is still stitched, and its result is reported as the finding it is
  (``untrained_beyond_self``), gating nothing.

:func:`late_rows` stitches the negative control's rows: the label-free noise, the untrained sender
and the receiver itself at the last two cuts (the self-stitches are cache hits where the page
already has them).
"""

from __future__ import annotations

import pandas as pd

from ...base.store import Store
from ...data.datasets import DataSpec
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import Net
from ...verdicts import controls, noise
from ...verdicts.results import Control
from .config import CUTS, SETS, UNTRAINED, StitchConfig
from .measured import ACC, noise_sender, recipe_net

LATE = CUTS[-controls.NEGATIVE_CUTS:]  # the negative control's cuts: the last two
LABEL_FREE = "Label-free noise"  # the negative control's sender since 2026-12-02 (no label information)


def long_rows(t: pd.DataFrame, init: int, test_set: str | None = None) -> pd.DataFrame:
    """A :func:`stitchkit.stitching.grid.stitch_grid` table in the long form of this module; ``test_set``
    names the test set of ``correct`` where it is not the receiver's (a noise sender's, one per
    initialisation and cut)."""
    out = pd.DataFrame({"init": init, "sender": t.sender, "receiver": t.receiver, "cut": t.cut_i,
                        "accuracy": t.accuracy, "baseline": t.receiver_accuracy, "correct": t.correct,
                        "baseline_correct": t.receiver_correct})
    if test_set is not None:
        out["test_set"] = [f"{test_set} {init} at {c}" for c in t.cut_i]
    return out


def self_rows(cfg: StitchConfig, receiver: str, data: str, cuts=CUTS, *, factor: float = 1,
              store: Store | None = None, device=None) -> pd.DataFrame:
    """``receiver`` stitched into itself at ``cuts`` with the page's recipe, trained and tested on
    ``data`` (a name of :data:`SETS`), every initialisation."""
    store = store or Store()
    frames = []
    for k in range(cfg.inits):
        net = recipe_net(cfg, receiver, k)
        recipe = cfg.recipe(k) if factor == 1 else cfg.recipe(k).longer(factor)
        frames.append(long_rows(stitch_grid([net], [net], [(c, c) for c in cuts], recipe, DataSpec(SETS[data]),
                                            store=store, device=device, progress=False), k))
    return pd.concat(frames, ignore_index=True)


def late_rows(cfg: StitchConfig, receiver: str, data: str, *, store: Store | None = None, device=None) -> pd.DataFrame:
    """The negative control's stitches, every initialisation k: label-free noise of seed k
    (:data:`LABEL_FREE`, with the noise sender's recipe, tested on its own noise) and an untrained
    ResNet-18 of seed k (:meth:`StitchConfig.untrained`, its BN statistics recalibrated on
    ``data``; reported, not gating) and ``receiver`` itself, each stitched into ``receiver`` at the
    last two cuts (the page's recipe, trained and tested on ``data``)."""
    store = store or Store()
    frames = []
    pairs = [(c, c) for c in LATE]
    for k in range(cfg.inits):
        net = recipe_net(cfg, receiver, k)
        untrained = Net(UNTRAINED, cfg.untrained(k, data))
        frames.append(long_rows(stitch_grid([untrained, net], [net], pairs, cfg.recipe(k), DataSpec(SETS[data]),
                                            store=store, device=device, progress=False), k))
        free = noise_sender(cfg, k, kind="label_free_noise", name=LABEL_FREE)
        frames.append(long_rows(stitch_grid([free], [net], pairs, cfg.noise_recipe(k), DataSpec(SETS[data]),
                                            store=store, device=device, progress=False), k, test_set="label-free noise"))
    return pd.concat(frames, ignore_index=True)


def _own(t: pd.DataFrame, receiver: str) -> pd.DataFrame:
    return t[(t.sender == receiver) & (t.receiver == receiver)]


def self_penalties(t: pd.DataFrame, receiver: str) -> pd.Series:
    """Per cut, the receiver minus its self-stitch (mean over initialisations, points; positive:
    the self-stitch loses accuracy)."""
    g = _own(t, receiver).groupby("cut", sort=False)
    return 100 * (g.baseline.mean() - g.accuracy.mean())


def positive_control_over_inits(t: pd.DataFrame, receivers, *, what: str = "",
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


def beyond_self_late(t: pd.DataFrame, receiver: str, sender: str = LABEL_FREE) -> float:
    """``sender``'s penalty beyond the self-stitch at the cuts it was stitched at (the last two):
    the mean over them of (self-stitched minus ``sender``-stitched accuracy, means over
    initialisations), points."""
    rows = t[t.receiver == receiver]
    own = _own(rows, receiver).groupby("cut").accuracy.mean()
    untr = rows[rows.sender == sender].groupby("cut").accuracy.mean()
    cuts = [c for c in untr.index if c in own.index]
    return 100 * float((own[cuts] - untr[cuts]).mean())


def negative_control_over_inits(t: pd.DataFrame, receivers, *, what: str = "", sample: str | None = None,
                                gate: str = LABEL_FREE) -> tuple[Control, dict[str, float]]:
    """The negative control over ``receivers`` (the smallest over them of :func:`beyond_self_late`
    of the ``gate`` sender: :data:`LABEL_FREE` noise), on ``t`` (:func:`late_rows`: the receiver's
    test set, a noise sender's own per initialisation and cut in ``test_set``; or ``sample`` names
    the column of each row's), its interval over the test images and the initialisations (a t
    interval over few). Returns the control and the numbers: ``label_free_beyond_self`` (the gate's,
    with ``_low``/``_high``) and ``untrained_beyond_self`` (the untrained sender's, a finding that
    gates nothing; for a VGG page whose gate is still the untrained sender, the gate's). Without the
    gate's rows: a failed control, not run."""
    receivers = list(receivers)
    rows = t[t.receiver.isin(receivers)]
    if rows[rows.sender == gate].empty:
        return not_run(controls.NEGATIVE, f"{_sender_text(gate)} stitched into the receiver at the last two cuts"), {}

    def estimate(sender: str) -> noise.Estimate:
        if "test_set" in rows and sample is None:
            sets = rows.assign(test_set=rows.test_set.where(rows.test_set.notna(), "receiver's"),
                               base_set="receiver's")
            return noise.bootstrap_table(sets, lambda u: min(beyond_self_late(u, r, sender) for r in receivers),
                                         groups="init", columns=ACC,
                                         column_samples={"correct": "test_set", "baseline_correct": "base_set"})
        return noise.bootstrap_table(rows, lambda u: min(beyond_self_late(u, r, sender) for r in receivers),
                                     groups="init", columns=ACC, sample=sample)

    e = estimate(gate)
    what = what or (f"{_sender_text(gate)} stitched into {' and into '.join(receivers)} at {', '.join(LATE)}")
    numbers = {}
    if gate == LABEL_FREE:
        numbers.update(label_free_beyond_self=e.value, label_free_beyond_self_low=e.low,
                       label_free_beyond_self_high=e.high)
        if not rows[rows.sender == UNTRAINED].empty:
            u = estimate(UNTRAINED)
            numbers.update(untrained_beyond_self=u.value, untrained_beyond_self_low=u.low,
                           untrained_beyond_self_high=u.high)
    else:
        numbers.update(untrained_beyond_self=e.value, untrained_beyond_self_low=e.low, untrained_beyond_self_high=e.high)
    return controls.untrained_sender_fails(e, what=what, sender="label-free noise" if gate == LABEL_FREE
                                           else "untrained sender"), numbers


def _sender_text(sender: str) -> str:
    return ("label-free noise (one cluster for every class: no label information), with the noise sender's recipe"
            if sender == LABEL_FREE else "an untrained ResNet-18, with the page's recipe")


def not_run(kind: str, text: str) -> Control:
    """A control the claim's kind needs that this run did not make: failed (the claim cannot be
    decided without it)."""
    return Control(f"{text}: not run", f"the {kind} control is required for this claim's kind", "not run", False,
                   None, kind)


def gain_numbers_over_inits(prefix: str, t: pd.DataFrame, receivers) -> dict[str, float]:
    """The self-stitch gain, reported and gated nowhere (:func:`stitchkit.verdicts.controls.gain_numbers`)
    over ``receivers``' self-penalties at every cut in ``t``."""
    pens = pd.concat([self_penalties(t, r) for r in receivers])
    return controls.gain_numbers(prefix, pens.to_numpy())
