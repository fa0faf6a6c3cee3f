"""How one-off runs and sweeps stop (their output folders are :mod:`stitchkit.base.fileio`'s
:func:`~stitchkit.base.fileio.fresh_folder`, :func:`~stitchkit.base.fileio.output_folder` and
:func:`~stitchkit.base.fileio.claimed`), the errors
a run or a sweep reports (an unwritable folder, a Dask scheduler that does not answer, failed or
interrupted sweeps with their tables), SIGTERM turned into an exception (:func:`on_sigterm`), and
the one line that says why a run failed (:func:`describe_failure`).
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:  # a signature's type only: pandas is imported where a function uses it
    import pandas as pd


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``) turned into an exception, so that a run stops as on Ctrl-C:
    its partial notebook kept as ``<ID>.failed.ipynb``, a sweep's table saved (see :func:`on_sigterm`)."""


@contextlib.contextmanager
def on_sigterm():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (the default would
    kill the process before any clean-up); the previous handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated("terminated (SIGTERM)")

    before = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C or SIGTERM: ``table`` (saved at ``path``) lists the finished runs,
    the interrupted one (``status`` interrupted, with its partial notebook) and those never started
    (``status`` pending)."""

    def __init__(self, table, path: Path, signal_name: str) -> None:
        self.table, self.path, self.signal_name = table, Path(path), signal_name
        done = int((table["status"].isin(["ok", "failed"])).sum())
        pending = int((table["status"] == "pending").sum())
        super().__init__(f"the sweep was interrupted ({signal_name}) after {done} of {len(table)} runs; "
                         f"{pending} pending; the table, with the interrupted and pending points, is in {self.path}")


class SweepFailed(RuntimeError):
    """Some runs of a sweep failed. ``table`` has one row per run (its parameters, the finished
    runs' numbers, ``status`` ok | failed, ``error``, ``notebook``), saved at ``path``."""

    def __init__(self, table, path: Path, parameters: Iterable[str]) -> None:
        self.table, self.path, self.parameters = table, Path(path), list(parameters)
        self.failed = table[table["status"] != "ok"]
        super().__init__(f"{len(self.failed)} of {len(table)} sweep runs failed; the results of the "
                         f"{len(table) - len(self.failed)} that finished, and the errors, are in {self.path}")

    def failed_points(self) -> list[str]:
        """One line per failed run: its parameters, the error, where its partial notebook is."""
        lines = []
        for _, row in self.failed.iterrows():
            point = ", ".join(f"{k}={row[k]!r}" for k in self.parameters)
            where = f" (partial notebook: {row['notebook']})" if isinstance(row.get("notebook"), str) else ""
            lines.append(f"{point}: {row['error']}{where}")
        return lines


def describe_failure(exc: BaseException) -> str:
    """One line saying why a run failed (for a notebook cell that raised, the cell's exception)."""
    if getattr(exc, "ename", None):  # papermill's PapermillExecutionError
        text = f"{exc.ename}: {exc.evalue} (in cell {getattr(exc, 'exec_count', '?')})"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def grid(values: Mapping[str, Iterable[Any]]) -> list[dict[str, Any]]:
    """Cartesian product of parameter values, in the order given."""
    keys = list(values)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(list(values[k]) for k in keys))]


def _flatten(prefix: str, obj: Any, out: dict) -> None:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            _flatten(f"{prefix}{k}.", v, out)
    elif isinstance(obj, (int, float, str, bool)) or obj is None:
        out[prefix[:-1]] = obj


def results_row(params: Mapping[str, Any], results: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {**params}
    _flatten("", results.get("numbers", {}), row)
    for c in results.get("claims", []):
        row[f"claim.{c['key']}"] = c["verdict"]
    row["wall_seconds"] = results.get("provenance", {}).get("wall_seconds")
    return row


def sweep_summary(table: pd.DataFrame, names: list[str]) -> str:
    """A sweep's table as a terminal reads it: one line per point, with the swept parameters
    (``names``), each claim's verdict in a word or two, the wall time and the status (the full
    table, every number included, is the sweep's ``results.csv``)."""
    import pandas as pd

    short = {"reproduced": "yes", "not reproduced": "no", "inconclusive at this scale": "inconclusive",
             "not assessed at smoke scale": "n/a (smoke)"}
    claims = [c for c in table.columns if c.startswith("claim.")]
    out = table[[c for c in (*names, *claims, "wall_seconds", "status") if c in table.columns]].copy()
    for c in claims:
        out[c] = out[c].map(lambda v: short.get(v, "" if pd.isna(v) else v))
    if "wall_seconds" in out:
        out["wall_seconds"] = out["wall_seconds"].map(lambda v: "" if pd.isna(v) else f"{v:.0f} s")
    return out.rename(columns={c: c[len("claim."):] for c in claims} | {"wall_seconds": "wall"}).to_string(index=False)


__all__ = ["SweepFailed", "SweepInterrupted", "Terminated", "describe_failure", "grid", "on_sigterm", "results_row",
           "sweep_summary"]
