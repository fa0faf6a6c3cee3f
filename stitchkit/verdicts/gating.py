"""Which outcome a failed control can have produced, and so whether it makes a claim
inconclusive (issue 46, amended 2026-11-27): the rule :class:`stitchkit.verdicts.results.Claim` and the
check of recorded verdicts (:func:`stitchkit.verdicts.results.check_verdict`) share.
"""

from __future__ import annotations

from typing import Any, Mapping

#: Which outcome a failed stitching control could have produced, by the claim's kind (amended
#: 2026-11-27, after the runs of issue 46 had been seen): control kind -> claim kind -> the values of
#: ``holds`` it can bias. A recipe that cannot reach the receiver (positive control failed) makes
#: stitches look worse: it can make a "stitch works" claim fail and a "stitch fails" claim hold, not
#: the reverse. A stitch that does the task by itself (negative control failed) makes stitches look
#: better: it can make a "works" claim hold and a "fails" claim fail. A failed control that cannot
#: bias the outcome observed is reported on the page but does not make the claim inconclusive (a
#: control that gates a claim it cannot bias is a defect). Every other pairing (``improves`` and
#: ``stitch_other`` claims, the training-length control, premises) gates either outcome.
CAN_BIAS: dict[str, dict[str, tuple[bool, ...]]] = {
    "positive": {"compatible": (False,), "fails": (True,)},
    "negative": {"compatible": (True,), "fails": (False,)},
}


NOT_GATING = "it cannot have produced this outcome: shown, not gating"

#: A premise without which the claim would hold by construction (B-F9's: a few-sample network already
#: within the bound of the full one makes "freeze-training comes within the bound" true whatever the
#: freezing does). Failed, it gates a claim found to hold, of any kind, and not one found not to hold
#: (amendment of 2026-12-02, issue 68).
GUARANTEE = "guarantee"


def gates(control_kind: str, claim_kind: str, holds: bool | None) -> bool:
    """Whether a failed control of ``control_kind`` makes a claim of ``claim_kind`` whose
    criterion gave ``holds`` inconclusive (:data:`CAN_BIAS`)."""
    if control_kind == GUARANTEE:
        return holds is not False
    table = CAN_BIAS.get(control_kind or "", {})
    if holds is None or (claim_kind or "") not in table:
        return True
    return holds in table[claim_kind]


def gating_failures(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The failed controls of a recorded claim that make it inconclusive (:func:`gates`)."""
    return [c for c in claim.get("controls") or [] if not c.get("passed", False)
            and gates(c.get("kind", ""), claim.get("kind", ""), claim.get("holds"))]


#: why a verdict is what it is (:func:`why_kind`), for the pages, the scorecard and the report
WHY_KINDS = ("decided", "within noise", "failed control", "failed premise", "not measured", "not assessed")


def why_kind(verdict: str, failed: list[Mapping[str, Any]], holds: bool | None) -> str:
    """Why a claim's verdict is what it is, in one of :data:`WHY_KINDS`: decided on its interval,
    or inconclusive because a control that could bias it failed, a premise failed, or the
    interval straddles the threshold (the first that applies, in that order)."""
    if verdict in ("reproduced", "not reproduced"):
        return "decided"
    if verdict != "inconclusive at this scale":
        return "not assessed"
    kinds = {k.get("kind") for k in failed}
    if kinds & {"positive", "negative", "training length", None}:  # None: recorded before controls had kinds
        return "failed control"
    if failed:
        return "failed premise"
    return "within noise" if holds is None else "not measured"


__all__ = ["CAN_BIAS", "GUARANTEE", "NOT_GATING", "WHY_KINDS", "gates", "gating_failures", "why_kind"]
