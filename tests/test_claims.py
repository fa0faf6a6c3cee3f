"""Claims as typed, frozen records: :class:`stitchkit.verdicts.claims.ClaimSpec`, and what
:meth:`stitchkit.verdicts.results.Run.record` accepts."""

from __future__ import annotations

import dataclasses

import pytest

from stitchkit.verdicts.claims import ClaimSpec, replace_in
from stitchkit.verdicts.noise import Estimate
from stitchkit.verdicts.results import Control, Run, at_least, at_most


def _control(passed: bool = True) -> Control:
    return Control.of("a premise", at_least(2.0 if passed else 0.0, 1.0, "m"))


def _claim(**kw) -> ClaimSpec:
    # a measured value with its interval (a bare number would get the zero-width control, issue 46)
    return ClaimSpec(**{"key": "c", "text": "a claim", "criterion": at_most(Estimate(1.0, 0.5, 1.5), 3.0, "x"), "paper": "p",
                        "ours": "o", **kw})


def test_a_claim_is_frozen_and_keeps_its_controls_as_a_tuple():
    claim = _claim(controls=[_control()])
    assert claim.controls == (_control(),) and isinstance(claim.controls, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.controls = ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.key = "other"


def test_with_controls_returns_a_new_claim_and_leaves_the_original_unchanged():
    claim = _claim(controls=[_control()])
    longer = claim.with_controls(_control(False))
    assert longer is not claim and longer.controls == (_control(), _control(False))
    assert claim.controls == (_control(),)
    assert dataclasses.replace(longer, controls=claim.controls) == claim  # nothing else changed
    assert claim.decided and not longer.decided  # a failed control: the verdict is no longer decided


def test_replace_in_swaps_the_claim_in_the_same_list():
    claims = [_claim(), _claim(key="d")]
    same = claims
    new = replace_in(claims, "d", _control(False))
    assert same is claims and claims[1] is new and new.controls == (_control(False),)
    assert claims[0].controls == ()
    with pytest.raises(KeyError, match="'e'"):
        replace_in(claims, "e", _control())


def test_a_wrong_criterion_or_control_type_is_refused_naming_the_claim():
    with pytest.raises(TypeError, match=r"claim 'bad'.*Criterion"):
        _claim(key="bad", criterion="x ≤ 3")
    with pytest.raises(TypeError, match=r"claim 'bad'.*Control"):
        _claim(key="bad", controls=[_control(), "passed"])
    with pytest.raises(TypeError, match=r"claim 'bad'.*Control"):
        _claim(key="bad").with_controls("not a control")  # a copy is checked like a new claim


def test_record_takes_claim_specs_and_refuses_a_dict_naming_its_key():
    run = Run("B-F2A", "demo", {})
    run.record({"x": 1.0}, [_claim(controls=[_control()], n=3)])
    (c,) = run.claims
    assert (c.key, c.text, c.criterion, c.paper, c.ours, c.n) == ("c", "a claim", "x ≤ 3.00 points", "p", "o", 3)
    assert c.controls == (_control(),) and c.verdict == "reproduced"
    as_dict = dict(key="old", text="t", criterion=at_most(1.0, 3.0, "x"), paper="p", ours="o")
    with pytest.raises(TypeError, match=r"claim 'old'.*ClaimSpec"):
        run.record({}, [as_dict])
    assert [c.key for c in run.claims] == ["c"]
