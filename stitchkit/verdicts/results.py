"""What a notebook run records: parameters, provenance, named numbers and claim verdicts.

``run = Run("B-F2A", scale, params)`` at the top of a notebook; ``run.record(numbers, claims)``
stores named numbers (glued, so prose can quote them with ``{glue:text}`key:.3f```) and claims,
and ``run.save()`` writes the results JSON atomically. The executor sets ``$STITCHKIT_RESULTS``
to the path beside the executed notebook and later adds the wall time.

Verdicts are three-valued and decided by criteria fixed before the run:

- ``reproduced`` / ``not reproduced``: the claim's :class:`Criterion` (built by :func:`at_most`,
  :func:`at_least`, :func:`within`, ... from one threshold, which also writes its text) holds
  or not;
- ``inconclusive at this scale``: a :class:`Control` stated with the claim failed (e.g. the
  receiver stitched into itself, where an exact stitch exists, does not reach ~0 penalty, so
  the stitch recipe is too weak at this scale to judge the claim);
- at ``smoke`` scale nothing is assessed (smoke models carry no evidence either way).
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..base import paths
from ..base.figure_files import FIGURES_ENV
from ..base.fileio import atomic_write_json
from ..base.ledger import networks_used
from ..base.provenance import provenance
from .gating import NOT_GATING, gates, gating_failures
from .noise import Estimate, as_estimate

RESULTS_ENV = "STITCHKIT_RESULTS"


VERDICTS = ("reproduced", "not reproduced", "inconclusive at this scale", "not assessed at smoke scale")
DIRECTIONS = ("<=", ">=", "<", ">", "within")


def decide(low: float, high: float, threshold: float, direction: str, tolerance: float | None = None) -> bool | None:
    """Whether an interval [low, high] lies wholly on the claim's side of ``threshold`` (True),
    wholly on the other side (False), or straddles it (None: within noise). ``within``: the
    interval inside [threshold - tolerance, threshold + tolerance] (True) or disjoint from it
    (False). An exact value (low == high) gives the plain comparison."""
    if direction == "within":
        if tolerance is None:
            raise ValueError("direction 'within' needs a tolerance")
        tol = tolerance * (1 + 1e-9) + 1e-12  # 0.97 vs 0.99 ± 0.02 is within
        lo_b, hi_b = threshold - tol, threshold + tol
        if lo_b <= low and high <= hi_b:
            return True
        return False if (high < lo_b or low > hi_b) else None
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
    eps = 1e-9 * (1 + abs(threshold))  # a sum's rounding (1e-14) is not a side of the threshold
    ok = {"<=": lambda x: x <= threshold + eps, ">=": lambda x: x >= threshold - eps,
          "<": lambda x: x < threshold - eps, ">": lambda x: x > threshold + eps}[direction]
    if ok(low) and ok(high):
        return True
    if not ok(low) and not ok(high):
        return False
    return None


@dataclass(frozen=True)
class Criterion:
    """A threshold test on a measured value: its text (what is compared with what), the value's
    interval and the threshold, and the result: True, False, or None when the interval contains
    the threshold (within noise: neither side is shown)."""

    text: str
    holds: bool | None
    value: float | None = None
    low: float | None = None
    high: float | None = None
    threshold: float | None = None
    direction: str | None = None
    tolerance: float | None = None
    unit: str = ""
    n_test: int | None = None
    n_seeds: int = 1
    interval: str = ""  # what the interval is, in words

    def fields(self) -> dict[str, Any]:
        """The numeric record a claim keeps (value, interval, threshold, direction, unit, n...)."""
        return {k: getattr(self, k) for k in ("value", "low", "high", "threshold", "direction", "tolerance", "unit",
                                              "n_test", "n_seeds", "interval")}

    def describe_value(self, digits: int = 2) -> str:
        if self.value is None:
            return ""
        return as_estimate(self.value if self.low is None else
                           Estimate(self.value, self.low, self.high, self.n_test, self.n_seeds)).text(digits, self.unit)


def _fmt(x: float, unit: str, digits: int) -> str:
    return f"{x:.{digits}f}{(' ' + unit) if unit else ''}"


def criterion(value: "float | Estimate", threshold: float, direction: str, text: str, unit: str,
               tolerance: float | None = None) -> Criterion:
    e = as_estimate(value)
    return Criterion(text, decide(e.low, e.high, threshold, direction, tolerance), e.value, e.low, e.high,
                     float(threshold), direction, None if tolerance is None else float(tolerance), unit, e.n_test,
                     e.n_seeds, e.describe())


def at_most(value: "float | Estimate", threshold: float, what: str, *, unit: str = "points",
            digits: int = 2) -> Criterion:
    """``what`` ≤ threshold (for an :class:`Estimate`: its whole interval; see :func:`decide`)."""
    return criterion(value, threshold, "<=", f"{what} ≤ {_fmt(threshold, unit, digits)}", unit)


def at_least(value: "float | Estimate", threshold: float, what: str, *, unit: str = "points",
             digits: int = 2) -> Criterion:
    """``what`` ≥ threshold."""
    return criterion(value, threshold, ">=", f"{what} ≥ {_fmt(threshold, unit, digits)}", unit)


def more_than(value: "float | Estimate", threshold: float, what: str, *, unit: str = "points",
              digits: int = 2) -> Criterion:
    """``what`` > threshold (the negation of :func:`at_most`)."""
    return criterion(value, threshold, ">", f"{what} > {_fmt(threshold, unit, digits)}", unit)


def less_than(value: "float | Estimate", threshold: float, what: str, *, unit: str = "points",
              digits: int = 2) -> Criterion:
    """``what`` < threshold."""
    return criterion(value, threshold, "<", f"{what} < {_fmt(threshold, unit, digits)}", unit)


def within(value: "float | Estimate", paper: float, tol: float, what: str, *, unit: str = "points",
           digits: int = 2) -> Criterion:
    """``|what − paper| ≤ tol``."""
    return criterion(value, paper, "within",
                      f"|{what} − paper's {_fmt(paper, unit, digits)}| ≤ {_fmt(tol, unit, digits)}", unit, tol)


@dataclass(frozen=True)
class Control:
    """A check stated before the run whose failure makes a claim inconclusive at this scale. It
    passes only when its criterion is shown to hold (an interval that straddles its bound fails:
    the control is not demonstrated)."""

    text: str  # what the control is, in words
    criterion: str  # its pass condition
    value: str  # what we measured, formatted
    passed: bool
    record: dict | None = None  # the criterion's numeric fields
    kind: str = ""  # positive, negative, training length (stitchkit.verdicts.controls.KINDS), or "" for a premise

    @classmethod
    def of(cls, text: str, criterion: Criterion, value: str | None = None, *, kind: str = "") -> "Control":
        return cls(text, criterion.text, value if value is not None else criterion.describe_value(),
                   criterion.holds is True, criterion.fields() if criterion.value is not None else None, kind)


def control_passes(record: Mapping[str, Any]) -> bool:
    """Whether a control passes by its numeric record: its interval shown on the pass side, or
    (rule ``agrees``, the training-length control) the same decided result as the base run."""
    decided = decide(record["low"], record["high"], record["threshold"], record["direction"], record.get("tolerance"))
    if record.get("rule") == "same":  # the training-length control since issue 46: the same result
        return decided == record.get("base_holds")
    if record.get("rule") == "agrees":  # before it: a base run within noise passed unchecked
        return record.get("base_holds") is None or decided == record["base_holds"]
    return decided is True


WITHIN_NOISE = "within noise"


def unexplained_zero_width(fields: Mapping[str, Any]) -> bool:
    """Whether a criterion's interval has zero width with no stated reason that its number carries
    no sampling noise: a bare number (``exact (no sampling noise)``), or a resampled interval that
    collapsed (the noise it should carry, e.g. of the networks, was never resampled). A reason is
    given with :func:`stitchkit.verdicts.noise.exact` (``why=...``)."""
    from .noise import STATED_REASONS

    low, high = fields.get("low"), fields.get("high")
    if low is None or high is None or low != high:
        return False
    return str(fields.get("interval") or "") not in STATED_REASONS


def ZERO_WIDTH_CONTROL(fields: Mapping[str, Any]) -> Control:
    """The failed control a claim gets when :func:`unexplained_zero_width` (issue 46)."""
    return Control("the judged number has an interval (a zero-width interval needs a stated reason that it carries "
                   "no sampling noise)", "an interval wider than zero, or the reason it has none",
                   f"{fields.get('value'):.4g} with a zero-width interval ({fields.get('interval') or 'no interval'})",
                   False, None, "noise")


# A verdict in a word or two, for badges that also carry the scale ("inconclusive · demo").
SHORT_VERDICT = {"reproduced": "reproduced", "not reproduced": "not reproduced",
                 "inconclusive at this scale": "inconclusive", "not assessed at smoke scale": "not assessed"}


def badge_label(verdict: str, scale: str = "") -> str:
    """A verdict badge's text: the short verdict and the scale it holds at ("inconclusive · demo")."""
    short = SHORT_VERDICT.get(verdict, verdict)
    return f"{short} · {scale}" if scale else short


def _subject(text: str) -> str:
    """A control's text up to its first ':' or ' (': what it checks, without the rule."""
    cut = [i for i in (text.find(":"), text.find(" (")) if i > 0]
    return text[:min(cut)] if cut else text


def _measured(rec: Mapping[str, Any]) -> str:
    unit = f" {rec['unit']}" if rec.get("unit") else ""
    v, lo, hi = rec["value"], rec["low"], rec["high"]
    return f"{v:.3g}{unit}" if lo == hi == v else f"{v:.3g} [{lo:.3g}, {hi:.3g}]{unit}"


_RULE = {"<=": "≤", ">=": "≥", "<": "<", ">": ">"}
_OUTCOME = {True: "holds", False: "fails", None: "is within noise"}


def why_failed(control: Mapping[str, Any]) -> str:
    """What went wrong with a failed control, in one sentence with its numbers (a control as
    recorded in a results file: text, criterion, value, passed, record)."""
    rec = control.get("record")
    name = _subject(str(control.get("text", "")))
    if not rec or rec.get("low") is None:
        return f"{name}: measured {control.get('value')}, needed {control.get('criterion')}"
    measured = _measured(rec)
    unit = f" {rec['unit']}" if rec.get("unit") else ""
    if rec.get("rule") in ("agrees", "same"):  # the training-length control
        factor = re.search(r"(\d+(?:\.\d+)?)\s*[x×]", str(control.get("text", "")))
        longer = f"{factor.group(1)}× longer training" if factor else "longer training"
        now = decide(rec["low"], rec["high"], rec["threshold"], rec["direction"], rec.get("tolerance"))
        rule = (f"±{rec['tolerance']:.3g} of {rec['threshold']:.3g}" if rec["direction"] == "within"
                else f"{_RULE[rec['direction']]} {rec['threshold']:.3g}")
        return (f"with {longer} the claim's value is {measured} (needed {rule}{unit}): it {_OUTCOME[now]}, "
                f"where the shorter run's {_OUTCOME[rec.get('base_holds')].replace('is within noise', 'was within noise')}"
                .replace("run's holds", "run's held").replace("run's fails", "run's failed"))
    if rec["direction"] == "within":
        if rec["threshold"] == 0 and "itself" in name:  # the self-stitch control
            tol = rec["tolerance"]
            side = ("the stitch alone adds accuracy" if rec["high"] < -tol else "the stitch recipe is too weak"
                    if rec["low"] > tol else "its interval reaches past the bound")
            return f"{name}: self-penalty {measured}, not wholly within ±{rec['tolerance']:.3g}{unit} ({side})"
        return f"{name}: {measured}, not wholly within ±{rec['tolerance']:.3g}{unit} of {rec['threshold']:.3g}"
    return f"{name}: {measured}, not wholly {_RULE[rec['direction']]} {rec['threshold']:.3g}{unit}"


@dataclass
class Claim:
    key: str
    text: str  # the paper's claim, in words
    criterion: str  # how our verdict is decided, in words
    paper: str  # the paper's number or statement
    ours: str  # our measured value, formatted
    holds: bool | None  # computed from the criterion (None: its interval contains the threshold)
    scale: str  # the run's scale: smoke runs carry no evidence either way
    controls: tuple[Control, ...] = ()  # a failed control makes the verdict inconclusive
    n: int = 1  # independent seeds behind ``ours``
    # the numeric record (Criterion.fields): value, low, high, threshold, direction, tolerance,
    # unit, n_test, n_seeds, interval; None where a claim was judged without one
    value: float | None = None
    low: float | None = None
    high: float | None = None
    threshold: float | None = None
    direction: str | None = None
    tolerance: float | None = None
    unit: str = ""
    n_test: int | None = None
    n_seeds: int = 1
    interval: str = ""
    kind: str = ""  # what the claim says of stitching (stitchkit.verdicts.controls.KINDS); "" not stated
    same_as: str = ""  # "ID:key": the same claim, on the same evidence, made and counted on that page ("": none)

    @property
    def failed_controls(self) -> list[Control]:
        """The failed controls that make this claim inconclusive (a failed control that cannot bias
        the outcome observed, :func:`gates`, is shown with the others but does not count)."""
        return [c for c in self.controls if not c.passed and gates(c.kind, self.kind, self.holds)]

    @property
    def verdict(self) -> str:
        return verdict_of(self.scale, not self.failed_controls, self.holds)

    @property
    def reason(self) -> str:
        """Why a verdict is inconclusive: the failed controls, or the interval within noise."""
        if self.scale == "smoke":
            return ""
        parts = []
        if self.holds is None and self.low is None:  # nothing was measured (a criterion without a value)
            parts.append("not measured")
        elif self.holds is None:
            parts.append(f"{WITHIN_NOISE}: the interval [{self.low:.4g}, {self.high:.4g}] contains the threshold "
                         f"{self.threshold:.4g}" + (f" ± {self.tolerance:.4g}" if self.direction == "within" else ""))
        if self.failed_controls:
            parts.append("control failed: " + "; ".join(c.text for c in self.failed_controls))
        return "; ".join(parts)


def verdict_of(scale: str, controls_passed: bool, holds: bool | None) -> str:
    """The verdict rule: nothing at smoke; a failed control or an interval that contains the
    threshold is inconclusive; otherwise the criterion decides."""
    if scale == "smoke":
        return "not assessed at smoke scale"
    if not controls_passed or holds is None:
        return "inconclusive at this scale"
    return "reproduced" if holds else "not reproduced"


def check_verdict(claim: Mapping[str, Any], scale: str, where: str = "") -> None:
    """Raise ValueError unless a recorded claim's verdict follows from its numeric fields (the
    interval against the threshold and direction) and its controls' results. A claim without the
    numeric record (``direction`` None: written before the noise model) is only checked for its
    controls and criterion result."""
    name = f"{where}: claim {claim.get('key')!r}"
    controls_passed = not gating_failures(claim)
    holds = claim.get("holds")
    if claim.get("direction") is not None:
        for k in ("value", "low", "high", "threshold"):
            if not isinstance(claim.get(k), (int, float)):
                raise ValueError(f"{name}: numeric field {k!r} is {claim.get(k)!r}")
        decided = decide(claim["low"], claim["high"], claim["threshold"], claim["direction"], claim.get("tolerance"))
        if decided != holds:
            raise ValueError(f"{name}: holds is {holds!r}, but its interval [{claim['low']}, {claim['high']}] "
                             f"against {claim['direction']} {claim['threshold']} gives {decided!r}")
        for c in claim.get("controls") or []:
            r = c.get("record")
            if r and r.get("direction") is not None:
                if control_passes(r) != c.get("passed"):
                    raise ValueError(f"{name}: control {c.get('text')!r} passed={c.get('passed')!r} does not follow "
                                     "from its interval")
    expected = verdict_of(scale, controls_passed, holds)
    if claim.get("verdict") != expected:
        raise ValueError(f"{name}: verdict {claim.get('verdict')!r} does not follow from its fields ({expected!r})")


class Run:
    """Collects one notebook run's numbers and claims and writes them as JSON."""

    def __init__(self, figure_id: str, scale: str, params: Any, seed: int | None = None, *,
                 role: str | None = None) -> None:
        """``role``: for a page that makes no claim, what it does instead (its result box says it)."""
        from ..registry.scales import check_scale

        self.figure_id, self.scale, self.role = figure_id, check_scale(scale), role
        if self.scale == "smoke":  # verdicts are not assessed at smoke: a rough interval is enough
            from . import noise

            noise.use_resamples(min(noise.RESAMPLES, noise.SMOKE_RESAMPLES))
        self.params = asdict(params) if is_dataclass(params) else dict(params)
        self.numbers: dict[str, Any] = {}
        self.claims: list[Claim] = []
        self.figures: dict[str, list[str]] = {}  # figure key -> its files (Run.figure)
        self.provenance = provenance(seed=seed)
        from ..registry.staleness import library_hashes

        # the library as the run imported it (the notebook imports its experiments before Run): a file
        # edited while the page runs is not recorded as the one that ran
        self._library = library_hashes(scale=self.scale)
        self._t0 = time.perf_counter()

    def number(self, key: str, value: Any, *, glue: bool = True) -> Any:
        """Record ``value`` under ``key`` (and glue it for the page's prose)."""
        if hasattr(value, "item"):
            value = value.item()
        self.numbers[key] = value
        if glue:
            _glue(key, value)
        return value

    def text(self, key: str, value: str) -> str:
        """Glue ``value`` under ``key`` for the page's prose, without recording it among the
        numbers (what the run was, in words: e.g. its networks' recipes)."""
        _glue(key, value)
        return value

    def claim(self, key: str, text: str, *, criterion: Criterion, paper: str, ours: str,
              controls: tuple[Control, ...] | list[Control] = (), n: int = 1, kind: str = "",
              same_as: str = "") -> Claim:
        """Record a claim whose verdict follows from ``criterion`` and ``controls``."""
        if any(c.key == key for c in self.claims):
            raise ValueError(f"claim {key!r} recorded twice")
        f = criterion.fields()
        controls = tuple(controls)
        if self.scale != "smoke" and unexplained_zero_width(f):
            controls += (ZERO_WIDTH_CONTROL(f),)
        c = Claim(key, text, criterion.text, paper, ours, criterion.holds, self.scale, controls, n,
                  **{**f, "n_seeds": max(n, f["n_seeds"])}, kind=kind, same_as=same_as)
        self.claims.append(c)
        _glue(f"verdict_{key}", c.verdict)
        return c

    def figure(self, key: str, fig: Any) -> None:
        """Glue a matplotlib figure under ``key`` for a captioned ``{glue:figure}`` in the page's
        markdown, and close it (so it is not also shown bare). A figure of several panels is also
        glued laid out for a phone, one panel per row, under ``key + STACKED_SUFFIX``
        (:func:`stitchkit.base.one_column.restack`); the book shows that one on a phone
        (book/_ext/stacked_figures.py). The figure's files are the wide figure's."""
        import matplotlib.pyplot as plt

        fig.set_dpi(FIGURE_DPI)  # the page scales it to its width; the link opens it at full size
        _glue(key, fig)
        folder = os.environ.get(FIGURES_ENV)
        if folder:  # a run executed into a page: the figure as SVG and its plotted data as CSV, linked there
            from ..base.figure_files import write_figure_files

            self.figures[key] = write_figure_files(fig, folder, key)
        if _in_kernel():  # (outside a notebook nothing is glued: no phone rendering to make)
            stacked = one_column_figure(key, fig)
            if stacked is not None:
                _glue(key + STACKED_SUFFIX, stacked)
        plt.close(fig)

    def built_from(self, read: Mapping[str, tuple[Any, Mapping[str, Any] | None]]) -> None:
        """For a page built from other pages' results (B-T1, B-F2B): record which it read (figure
        ID -> (the results file, its contents or None)), so that the page is behind as soon as one
        of them changes (:func:`stitchkit.registry.staleness.source_changes`)."""
        from ..registry.staleness import source_record

        self.sources = {**getattr(self, "sources", {}), **source_record(read)}

    def record(self, numbers: dict[str, Any], claims: Iterable[Any]) -> None:
        """Record every named number and every claim (:class:`stitchkit.verdicts.claims.ClaimSpec`, by its fields)."""
        for key, value in numbers.items():
            self.number(key, value)
        for c in claims:
            if isinstance(c, Mapping):
                raise TypeError(f"claim {c.get('key')!r} is a dict: build it with stitchkit.verdicts.claims.ClaimSpec")
            self.claim(c.key, c.text, criterion=c.criterion, paper=c.paper, ours=c.ours, controls=c.controls, n=c.n,
                       kind=c.kind, same_as=c.same_as)

    def claims_table(self):
        """The claims' details below the page's box (which shows each claim, the paper's value,
        ours and the verdict): per claim its criterion, the judged value with its interval, and
        every control, passed or failed, in words (:func:`claims_html`)."""
        from IPython.display import HTML

        return HTML(claims_html(self.to_dict()["claims"]))

    def to_dict(self) -> dict[str, Any]:
        from ..base import store  # torch, only when a run saves
        from ..registry.staleness import CODE_HASH, library_hashes

        return {"id": self.figure_id, "scale": self.scale, "params": self.params,
                "provenance": {**self.provenance, "compute_seconds": round(time.perf_counter() - self._t0, 1),
                               "cache": store.ledger_summary(), "networks": networks_used()},
                "numbers": self.numbers, **({"role": self.role} if self.role else {}),
                "claims": [{**{k: v for k, v in asdict(c).items() if k != "same_as" or v}, "verdict": c.verdict,
                            "reason": c.reason} for c in self.claims],
                **({"figures": dict(self.figures)} if self.figures else {}),
                # the pages a derived page read, by the digest of their results (it is behind when one changes)
                **({"sources": dict(self.sources)} if getattr(self, "sources", None) else {}),
                # the library modules this run imported, by hash: the page is behind when one changes
                "library_sha256": dict(sorted({**library_hashes(scale=self.scale), **self._library}.items())),
                "library_hash": CODE_HASH}

    def save(self, path: str | os.PathLike | None = None) -> Path:
        default = paths.RUNS_DIR / "interactive" / f"{self.figure_id}.results.json"
        path = Path(path or os.environ.get(RESULTS_ENV) or default)
        atomic_write_json(path, self.to_dict())
        return path


_BADGE_COLOUR = {"reproduced": "success", "not reproduced": "danger", "inconclusive at this scale": "warning",
                 "not assessed at smoke scale": "secondary"}


def claims_html(claims: list[Mapping[str, Any]]) -> str:
    """The claims of a results file as HTML, one block per claim: the claim and its verdict
    badge, then its criterion, the judged value with its interval, and each control (✓ passed,
    ✗ failed, with what went wrong: :func:`why_failed`)."""
    import html

    def h(x: Any) -> str:
        return html.escape(str(x), quote=True)

    blocks = []
    for c in claims:
        colour = _BADGE_COLOUR.get(c.get("verdict", ""), "secondary")
        badge = (f'<span class="sd-sphinx-override sd-badge sd-bg-{colour} sd-bg-text-{colour}">'
                 f'{h(badge_label(c.get("verdict", ""), c.get("scale", "")))}</span>')
        items = [f"<li><b>criterion</b> {h(c.get('criterion', ''))}</li>"]
        if c.get("value") is not None and c.get("low") is not None:
            e = Estimate(c["value"], c["low"], c["high"], c.get("n_test"), c.get("n_seeds") or 1)
            judged = e.text(3, c.get("unit") or "") + ("" if e.exact else f"; {c.get('interval') or '95% interval'}")
            items.append(f"<li><b>judged</b> {h(judged)}</li>")
        for k in c.get("controls") or []:
            mark = "✓" if k.get("passed") else "✗"
            said = (f"{k.get('text')}: {k.get('value')}" if k.get("passed") else why_failed(k))
            if not k.get("passed") and not gates(k.get("kind", ""), c.get("kind", ""), c.get("holds")):
                said += f" ({NOT_GATING})"
            items.append(f"<li><b>control {mark}</b> {h(said)}</li>")
        if c.get("reason") and not gating_failures(c):
            items.append(f"<li><b>why inconclusive</b> {h(c['reason'])}</li>")
        blocks.append(f'<div class="sk-claim"><p><b>{h(c.get("text", ""))}</b> {badge}</p><ul>{"".join(items)}</ul>'
                      "</div>")
    return '<div class="sk-claims-detail">' + "".join(blocks) + "</div>"


FIGURE_DPI = 150
# The glue key of a figure's phone rendering: the figure's key and this (Run.figure; book/_ext/stacked_figures.py).
STACKED_SUFFIX = "--stacked"


def one_column_figure(key: str, fig: Any) -> Any:
    """``fig`` laid out again for a phone (:func:`stitchkit.base.one_column.restack`, in place),
    or None when it has a single panel. A figure that cannot be laid out so (an error, or a
    layout that collapses) keeps its wide rendering alone, and the run says why on stderr: the
    page still runs."""
    import warnings

    from ..base.one_column import restack

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if not restack(fig):
                return None
            fig.set_dpi(FIGURE_DPI)
            fig.canvas.draw()
        if caught:
            raise RuntimeError(str(caught[0].message))
    except Exception as exc:  # whatever figure a page draws: its wide rendering stands
        print(f"[stitchkit] figure {key!r}: no phone rendering ({type(exc).__name__}: {exc}); the wide figure "
              "alone is shown", file=sys.stderr, flush=True)
        return None
    return fig



GLUE_PREFIX = "application/papermill.record/"  # myst-nb's mime prefix of a glued, undisplayed value


def _in_kernel() -> bool:
    return "ipykernel" in sys.modules


def _glue(key: str, value: Any) -> None:
    """``myst_nb.glue(key, value, display=False)`` inside a kernel; where myst-nb is not installed
    (a GPU machine that runs pages for the book built elsewhere) the same output, written here:
    the value's display data under myst-nb's mime prefix, named in the ``scrapbook`` metadata."""
    if not _in_kernel():  # outside a notebook: numbers still go to the JSON
        return
    try:
        from myst_nb import glue
    except ImportError:
        from IPython.core.formatters import format_display_data
        from IPython.display import display

        bundle, metadata = format_display_data(value)
        metadata["scrapbook"] = {"name": key, "mime_prefix": GLUE_PREFIX}
        display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
        return
    glue(key, value, display=False)
