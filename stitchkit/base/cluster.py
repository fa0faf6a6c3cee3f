"""A Dask cluster for the work of one page or of a sweep, named by its scheduler's address.

:func:`connect` refuses, in one line naming the address, a scheduler that does not answer or has
no workers (a run would otherwise wait forever). A sweep passes its ``--dask`` address here; a
page run with ``stitchkit run --dask ADDRESS`` sets :data:`DASK_ENV` for its kernel, and
:func:`grid_client` then hands the page's stitch grids to the cluster (one task per sender and
receiver; the workers read and write the same store, so ``STITCHKIT_CACHE`` and the data root
must be on a file system every worker sees).
"""

from __future__ import annotations

import os

# the scheduler address (the stitch grids of this process run on that cluster) and the seconds to wait for it
from .environment import DASK_ENV, dask_timeout_from_env


class DaskSchedulerError(ConnectionError):
    """The Dask scheduler did not answer, or has no workers; the message names its address."""


def connect(address: str, timeout: float = 10.0):
    """A client of the scheduler at ``address`` that has at least one worker: an unreachable
    scheduler, or one without workers after ``timeout`` seconds, raises :class:`DaskSchedulerError`."""
    from distributed import Client

    try:
        client = Client(address, timeout=timeout)
    except Exception as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise DaskSchedulerError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({reason}); "
                                 "check the address and that the scheduler is running, or leave out --dask to "
                                 "run here") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except Exception:  # TimeoutError (distributed's or asyncio's)
        client.close()
        raise DaskSchedulerError(f"the Dask scheduler at {address} has no workers (waited {timeout:g} s): start "
                                 "workers with `dask worker " + address + "`, or leave out --dask to run here") from None
    return client


_CLIENTS: dict[str, object] = {}


def grid_client():
    """The client of the cluster :data:`DASK_ENV` names (connected once per process), or None
    when it names none: the stitch grid's default."""
    address = os.environ.get(DASK_ENV, "").strip()
    if not address:
        return None
    if address not in _CLIENTS:
        _CLIENTS[address] = connect(address, dask_timeout_from_env())
    return _CLIENTS[address]


__all__ = ["DaskSchedulerError", "connect", "grid_client"]
