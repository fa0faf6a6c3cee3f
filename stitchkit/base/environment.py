"""The environment variables a run reads, checked at start-up (issue 50: a bad value is a bad input,
refused before any compute). Plain Python: the command line checks them without importing torch."""

from __future__ import annotations

import os
import re

PRECISION_ENV = "STITCHKIT_PRECISION"  # fp32 | bf16: what "auto" means on every device (stitchkit.base.hardware)
RESAMPLES_ENV = "STITCHKIT_RESAMPLES"  # bootstrap resamples (stitchkit.verdicts.noise reads it)


COMPILE_ENV = "STITCHKIT_COMPILE"  # 0 never | 1 always | unset: where it wins (stitchkit.base.hardware)
DASK_ENV = "STITCHKIT_DASK"  # a Dask scheduler's address (stitchkit.base.cluster)
DASK_TIMEOUT_ENV = "STITCHKIT_DASK_TIMEOUT"  # seconds to wait for it
PROGRESS_ENV = "STITCHKIT_PROGRESS"  # 0 turns the terminal's progress bars off (stitchkit.base.progress)
ALLOW_PARTIAL_ENV = "STITCHKIT_ALLOW_PARTIAL_DATA"  # 1: accept a data set smaller than its release (stitchkit.data.integrity)
SEED_OFFSET_ENV = "STITCHKIT_SEED_OFFSET"  # added to every trained network's seeds (the replication check)
DOWNLOAD_ENV = "STITCHKIT_DOWNLOAD"  # 1: download a missing CIFAR-10 or MNIST (stitchkit.data.archives)
MIRROR_ENV = "STITCHKIT_DATA_MIRROR"  # base URLs (http(s):// or file://) the downloads are fetched from

# The most bootstrap resamples a run may ask for: a resample keeps a few bytes per test image for each
# claim, so 10^5 of them over 10,000 images is already gigabytes (the default is 1,000).
MAX_RESAMPLES = 100_000
MAX_DASK_TIMEOUT = 3600.0
_SWITCH = ("0", "1", "false", "true", "no", "yes", "off", "on")
# tcp://host:port, tls://..., inproc://..., ucx://..., ws(s)://..., or host:port (distributed's forms)
_ADDRESS = re.compile(r"^((tcp|tls|inproc|ucx|ws|wss)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+)(:[0-9]{1,5})?(/[^\s]*)?$")


def _cut(raw: str, limit: int = 80) -> str:
    """A value as an error message shows it: cut after ``limit`` characters."""
    return repr(raw) if len(raw) <= limit else repr(raw[:limit]) + f"... ({len(raw)} characters)"


def resamples_from_env(default: int = 1000) -> int:
    """``STITCHKIT_RESAMPLES`` as a whole number in [20, :data:`MAX_RESAMPLES`] (``default`` when
    unset); an error naming the value and what is valid otherwise."""
    raw = os.environ.get(RESAMPLES_ENV, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 20 <= n <= MAX_RESAMPLES:
        raise ValueError(f"{RESAMPLES_ENV}={_cut(raw)} is invalid: expected a whole number from 20 to "
                         f"{MAX_RESAMPLES:,} (default {default})")
    return n


def dask_timeout_from_env(default: float = 10.0) -> float:
    """``STITCHKIT_DASK_TIMEOUT`` as seconds in (0, :data:`MAX_DASK_TIMEOUT`] (``default`` when unset)."""
    raw = os.environ.get(DASK_TIMEOUT_ENV, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_DASK_TIMEOUT:  # (NaN fails too)
        raise ValueError(f"{DASK_TIMEOUT_ENV}={_cut(raw)} is invalid: expected seconds, a number in (0, "
                         f"{MAX_DASK_TIMEOUT:g}] (default {default:g})")
    return value


MAX_SEED_OFFSET = 10**6


def seed_offset_from_env() -> int:
    """``STITCHKIT_SEED_OFFSET`` as a whole number in [0, :data:`MAX_SEED_OFFSET`] (0 when unset):
    what :func:`stitchkit.networks.network.load_or_train` adds to every network's initialisation and
    training seeds, so that a page re-run with it judges other networks of the same recipes
    (``stitchkit replicate``)."""
    raw = os.environ.get(SEED_OFFSET_ENV, "").strip()
    if not raw:
        return 0
    try:
        n = int(raw)
    except ValueError:
        n = -1
    if not 0 <= n <= MAX_SEED_OFFSET:
        raise ValueError(f"{SEED_OFFSET_ENV}={_cut(raw)} is invalid: expected a whole number from 0 to "
                         f"{MAX_SEED_OFFSET:,} (unset: the pages' own seeds)")
    return n


def check_environment() -> None:
    """Check every ``STITCHKIT_*`` variable a run reads whose value has a form (the precision, the
    resamples, the compile switch, the Dask scheduler's address and timeout, the progress,
    partial-data and download switches, the download mirrors); an error names the variable, the value and the valid ones. The paths
    (``STITCHKIT_DATA_ROOT``, ``STITCHKIT_CACHE``) are checked where they are used, naming them."""
    forced = os.environ.get(PRECISION_ENV, "").strip().lower()
    if forced and forced not in ("bf16", "fp32"):
        raise ValueError(f"{PRECISION_ENV}={_cut(forced)} is invalid; valid: bf16, fp32 (or unset: bf16 where the "
                         "hardware computes it natively)")
    resamples_from_env()
    flag = os.environ.get(COMPILE_ENV)
    if flag is not None and flag not in ("", "0", "1"):
        raise ValueError(f"{COMPILE_ENV}={_cut(flag)} is invalid; valid: 0 (never compile), 1 (always), or unset "
                         "(where it is measured to win)")
    for name in (PROGRESS_ENV, ALLOW_PARTIAL_ENV, DOWNLOAD_ENV):
        value = os.environ.get(name, "").strip().lower()
        if value and value not in _SWITCH:
            raise ValueError(f"{name}={_cut(value)} is invalid; valid: {', '.join(_SWITCH)}")
    address = os.environ.get(DASK_ENV, "").strip()
    if address and not _ADDRESS.match(address):
        raise ValueError(f"{DASK_ENV}={_cut(address)} is not a Dask scheduler's address; expected tcp://HOST:PORT "
                         "(or HOST:PORT, tls://..., inproc://...), or unset to run here")
    dask_timeout_from_env()
    seed_offset_from_env()
    for url in os.environ.get(MIRROR_ENV, "").replace(",", " ").split():
        if not url.startswith(("http://", "https://", "file://")):
            raise ValueError(f"{MIRROR_ENV}: {_cut(url)} is not a base URL; give http://, https:// or file:// URLs, "
                             "separated by spaces or commas (or unset: the data sets' own sites)")


__all__ = ["ALLOW_PARTIAL_ENV", "COMPILE_ENV", "DASK_ENV", "DASK_TIMEOUT_ENV", "DOWNLOAD_ENV", "MAX_RESAMPLES",
           "MAX_SEED_OFFSET", "MIRROR_ENV",
           "PRECISION_ENV", "PROGRESS_ENV", "RESAMPLES_ENV", "SEED_OFFSET_ENV", "check_environment",
           "dask_timeout_from_env", "resamples_from_env", "seed_offset_from_env"]
