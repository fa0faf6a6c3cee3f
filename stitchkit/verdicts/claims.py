"""A claim as an experiment module states it, before a run records it: :class:`ClaimSpec`.

The summaries in ``stitchkit.experiments`` build each claim with its key, the paper's
statement, the :class:`~stitchkit.verdicts.results.Criterion` that decides it, the paper's number and
ours, and the :class:`~stitchkit.verdicts.results.Control` s stated with it; ``run.record(numbers,
claims)`` turns them into verdicts (:meth:`stitchkit.verdicts.results.Run.record`). A ClaimSpec is frozen:
a control found later (the training-length control, :func:`stitchkit.verdicts.controls.training_length`)
gives a new claim, :meth:`ClaimSpec.with_controls`, which takes the old one's place in the
list the page holds (:func:`replace_in`): the list changes, a claim never does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .results import Control, Criterion


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a page, for :meth:`stitchkit.verdicts.results.Run.record`: ``key`` (unique on the
    page), ``text`` (the paper's claim, in words), ``criterion`` (decides the verdict), ``paper``
    (the paper's number or statement), ``ours`` (our value, formatted), ``controls`` (a failed
    one makes the verdict inconclusive; a list is kept as a tuple) and ``n`` (independent seeds
    behind ``ours``), ``kind`` (what the claim says of stitching, which decides the controls it
    needs: :data:`stitchkit.verdicts.controls.KINDS`)."""

    key: str
    text: str
    criterion: Criterion
    paper: str
    ours: str
    controls: tuple[Control, ...] = ()
    n: int = 1
    kind: str = ""  # compatible, improves, fails, stitch_other, no_stitch (stitchkit.verdicts.controls.KINDS); "" not stated
    same_as: str = ""  # "ID:key": the same claim on the same evidence, counted on that page (the scorecard counts it once)

    def __post_init__(self) -> None:
        if self.kind:
            from .controls import required

            required(self.kind)  # a known kind
        if not isinstance(self.criterion, Criterion):
            raise TypeError(f"claim {self.key!r}: criterion must be a Criterion (at_most, at_least, within, ...), "
                            f"not {type(self.criterion).__name__}")
        object.__setattr__(self, "controls", tuple(self.controls))
        for k in self.controls:
            if not isinstance(k, Control):
                raise TypeError(f"claim {self.key!r}: every control must be a Control, not {type(k).__name__}")

    @property
    def decided(self) -> bool:
        """Whether the verdict is decided: the criterion's interval on one side of its threshold
        and every control passed that could have produced its outcome (:func:`stitchkit.verdicts.gating.gates`,
        the verdict's own rule; a claim that is not decided has nothing for a longer run to confirm)."""
        from .gating import gates

        holds = self.criterion.holds
        return holds is not None and all(k.passed or not gates(k.kind, self.kind, holds) for k in self.controls)

    def with_controls(self, *extra: Control) -> ClaimSpec:
        """A copy of this claim with ``extra`` appended to its controls (this one is unchanged)."""
        return replace(self, controls=(*self.controls, *extra))


def replace_in(claims: list[ClaimSpec], key: str, *extra: Control) -> ClaimSpec:
    """Put in place of the claim ``key`` in ``claims`` (the list itself, which the page records
    later) its copy with ``extra`` controls appended (:meth:`ClaimSpec.with_controls`); returns
    the new claim. KeyError if no claim in ``claims`` has that key."""
    for i, c in enumerate(claims):
        if c.key == key:
            claims[i] = c.with_controls(*extra)
            return claims[i]
    raise KeyError(f"no claim {key!r} among {[c.key for c in claims]}")
