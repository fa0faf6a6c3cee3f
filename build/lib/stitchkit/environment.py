"""The environment variables a run reads, checked at start-up (issue 50: a bad value is a bad input,
refused before any compute). Plain Python: the command line checks them without importing torch."""

from __future__ import annotations

import os

PRECISION_ENV = "STITCHKIT_PRECISION"  # fp32 | bf16: what "auto" means on every device (stitchkit.hardware)
RESAMPLES_ENV = "STITCHKIT_RESAMPLES"  # bootstrap resamples (stitchkit.noise reads it)


def resamples_from_env(default: int = 1000) -> int:
    """``STITCHKIT_RESAMPLES`` as a whole number >= 20 (``default`` when unset); an error naming
    the value and what is valid otherwise."""
    raw = os.environ.get(RESAMPLES_ENV, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 20:
        raise ValueError(f"{RESAMPLES_ENV}={raw!r} is invalid: expected a whole number >= 20 (default {default})")
    return n


def check_environment() -> None:
    """Check ``STITCHKIT_PRECISION`` and ``STITCHKIT_RESAMPLES``; an error names the value and the
    valid ones."""
    forced = os.environ.get(PRECISION_ENV, "").strip().lower()
    if forced and forced not in ("bf16", "fp32"):
        raise ValueError(f"{PRECISION_ENV}={forced!r} is invalid; valid: bf16, fp32 (or unset: bf16 where the "
                         "hardware computes it natively)")
    resamples_from_env()


__all__ = ["PRECISION_ENV", "RESAMPLES_ENV", "check_environment", "resamples_from_env"]
