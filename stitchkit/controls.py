"""The controls every page states before its run, one set for all four papers.

A control is a check whose failure makes a claim ``inconclusive at this scale``: it says the
experiment is able to judge the claim at all. A control *passes only when shown*: its criterion
is judged on the interval of its value (:mod:`stitchkit.noise`), so a control that holds by less
than its uncertainty fails. The kinds:

- :func:`self_stitch`: the receiver stitched into itself, where an exact stitch exists, must
  score its own accuracy: |self-penalty| ≤ a bound, **two-sided**: a stitch that adds accuracy
  by itself (a trained stitch acting as extra capacity, seen with ViT and B-F3B) fails it as
  surely as an under-trained one. Run with the recipe and length of the stitches it vouches for.
- :func:`training_length`: the claim re-judged on like-for-like numbers, the cells that decide
  it *and their references* retrained at k× the steps; it passes when the longer run gives the
  same, decided, result. A claim that only held because the stitches stopped short fails it.
- :func:`premise`: a condition the claim presupposes (the bigger network is better, the
  detector is trained, the probe separates the representations), with its margin judged on its
  interval.
- :func:`detector_sensitivity`: an OOD detector must separate *near* outliers (corrupted or
  patch-shuffled test images) from in-distribution ones before its verdicts on stitched
  representations mean anything; a detector that only separates MNIST cannot fail.
- :func:`trained`: a model reaches its task (accuracy at least a floor).
"""

from __future__ import annotations

from .noise import Estimate, as_estimate
from .results import Control, Criterion, at_least, at_most, control_passes, criterion


# The self-stitch control's bound for every paper (a fraction of the test set: 0.5 points), stated
# before any run: the receiver stitched into itself, where an exact stitch exists, must score its
# own accuracy within it, both ways.
SELF_STITCH_BOUND = 0.005


def self_stitch(penalty: "float | Estimate", bound: float, *, what: str = "receiver stitched into itself",
                unit: str = "points", digits: int = 2) -> Control:
    """Two-sided self-stitch control: the self-penalty (receiver minus self-stitched accuracy)
    lies within ±``bound`` (its whole interval). ``penalty``: the judged self-penalty, usually
    the largest |penalty| over cuts as a bootstrapped statistic (:func:`largest_abs`)."""
    crit = criterion(penalty, 0.0, "within", f"|self-penalty| ≤ {bound:g} {unit}", unit, bound)
    return Control.of(f"{what} (an exact stitch exists): |penalty| ≤ {bound:g} {unit}, both ways", crit)


def largest_abs(values) -> float:
    """The entry of largest magnitude, with its sign (the statistic :func:`self_stitch` judges
    over cuts: one cut at -3 and another at +0.2 gives -3)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    return float(v[np.argmax(np.abs(v))])


def premise(value: "float | Estimate", threshold: float, text: str, *, direction: str = ">=", what: str = "",
            unit: str = "points", digits: int = 2) -> Control:
    """A premise of the claim, judged on its interval: ``what`` ``direction`` ``threshold``."""
    rule = {">=": at_least, "<=": at_most}.get(direction)
    if rule is None:
        raise ValueError(f"premise direction must be '>=' or '<=', got {direction!r}")
    crit = rule(value, threshold, what or text, unit=unit, digits=digits)
    return Control.of(text, crit, crit.describe_value(digits))  # the value with the criterion's digits


def trained(accuracy: "float | Estimate", floor: float, text: str, *, what: str = "accuracy",
            unit: str = "", digits: int = 3) -> Control:
    """A model reaches its task: ``accuracy`` ≥ ``floor``."""
    return premise(accuracy, floor, text, what=what, unit=unit, digits=digits)


def detector_sensitivity(auroc: "float | Estimate", bound: float, *, what: str = "near-outlier AUROC") -> Control:
    """The OOD detector separates near-distribution outliers from the layer's test activations:
    AUROC ≥ ``bound`` (its interval) before any OOD verdict is read."""
    return premise(auroc, bound, f"the detector is sensitive to near outliers ({what} ≥ {bound:g})",
                   what=what, unit="", digits=3)


def training_length(base: Criterion, longer: Criterion, factor: float, *, what: str = "") -> Control:
    """The claim re-judged at ``factor``× the training steps on like-for-like numbers (the
    deciding cells and their references all retrained): passes when the longer run's criterion
    gives the same decided result as the base run's. ``longer`` is the claim's criterion
    computed from the longer run. A claim within noise at 1x passes it (nothing to confirm)."""
    # a claim within noise at 1x is inconclusive by itself: there is no verdict for longer
    # training to confirm, and the control does not add a second reason
    passed = base.holds is None or longer.holds == base.holds
    record = {**longer.fields(), "rule": "agrees", "base_holds": base.holds} if longer.value is not None else None
    text = what or f"the verdict survives {factor:g}x longer stitch training (deciding cells and references)"
    return Control(text, f"at {factor:g}x: {longer.text} gives the same result as at 1x", longer.describe_value(),
                   passed, record)


__all__ = ["SELF_STITCH_BOUND", "self_stitch", "largest_abs", "premise", "trained", "detector_sensitivity", "training_length",
           "control_passes", "as_estimate"]
