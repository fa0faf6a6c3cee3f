"""The Jupyter kernels a page runs in: over local IPC sockets in a folder of their own, tracked
while they live, and stopped at once by a signal to this process.

A kernel runs in a session of its own, so a terminal's Ctrl-C never reaches it, and a client that
waited for the running cell would wait for it to end (minutes). :func:`stop_kernels_on_signals`
makes SIGINT, SIGTERM and SIGHUP kill the kernel's process group and raise at once;
:func:`mark_interrupted` then records in the partial notebook the cell it stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import weakref
from pathlib import Path

from ..base.fileio import atomic_write_text
from .runs import Terminated

# The kernels this process has started and not yet shut down (a signal stops them: see execute).
_LIVE_KERNELS: "weakref.WeakSet" = weakref.WeakSet()
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def interruption(name: str) -> KeyboardInterrupt:
    return Terminated(f"terminated ({name})") if name != "SIGINT" else KeyboardInterrupt("interrupted (SIGINT)")


def kill_kernels() -> int:
    """Kill every kernel this process started that is still running, with its process group (the
    kernel runs in a session of its own, so a terminal's Ctrl-C never reaches it); returns how many."""
    killed = 0
    for km in list(_LIVE_KERNELS):
        pid = getattr(getattr(km, "provisioner", None), "pid", None)
        if not pid:
            continue
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        except OSError:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        killed += 1
    return killed


@contextlib.contextmanager
def stop_kernels_on_signals(stopped: dict):
    """Within the block (main thread only), SIGINT, SIGTERM and SIGHUP kill the running kernel at
    once and raise (``KeyboardInterrupt`` or :class:`Terminated`), so the cell it computes stops
    within seconds instead of running to its end (the signal's name goes into ``stopped``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        stopped["signal"] = signal.Signals(signum).name
        kill_kernels()  # the kernel first: the client's clean-up then has no busy kernel to wait for
        raise interruption(stopped["signal"])

    before = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, h in before.items():
            signal.signal(sig, h)


def mark_interrupted(notebook: Path, name: str) -> None:
    """Record in a partial notebook where the run was stopped: an error output in the cell that was
    running (the last one started), its papermill status ``interrupted``, the later ones ``pending``."""
    import nbformat

    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # a notebook papermill never finished writing: keep it as it is
        return
    code = [c for c in nb.cells if c.cell_type == "code"]
    started = [c for c in code if c.metadata.get("papermill", {}).get("start_time")]
    if not started:
        return
    stopped_at = started[-1]  # the last cell started (papermill may have marked it completed on its way out)
    stopped_at.metadata.setdefault("papermill", {})["status"] = "interrupted"
    stopped_at.setdefault("outputs", []).append(nbformat.v4.new_output(
        "error", ename="Interrupted", evalue=f"stitchkit stopped the run here ({name})", traceback=[]))
    for c in code[code.index(stopped_at) + 1:]:
        c.metadata.setdefault("papermill", {})["status"] = "pending"
    atomic_write_text(notebook, nbformat.writes(nb))


def ipc_kernel_manager() -> type:
    """A Jupyter kernel manager that talks to its kernel over local IPC sockets rather than TCP:
    nothing listens on a network port, and ipykernel does not print its "running over TCP
    without encryption" warning into every run's terminal. The sockets live in a temporary
    folder of their own (by default they are files ``kernel-ipc-N`` in the working directory,
    the repository root, where a killed run left them behind)."""
    from jupyter_client.manager import AsyncKernelManager

    # asynchronous, as nbclient's own default: a blocking client would wait for a dead kernel's reply
    # inside the event loop, where nbclient's check that the kernel is alive never gets to run
    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            kw.setdefault("transport", "ipc")
            self._ipc_dir = Path(tempfile.mkdtemp(prefix="stitchkit-kernel-"))
            kw.setdefault("ip", str(self._ipc_dir / "kernel"))
            super().__init__(**kw)
            _LIVE_KERNELS.add(self)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            # the sockets' folder goes with the kernel (a run used to leave an empty one behind)
            await super()._async_cleanup_resources(restart=restart)
            if not restart:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)
                _LIVE_KERNELS.discard(self)

        cleanup_resources = _async_cleanup_resources

    return IPCKernelManager



__all__ = ["STOP_SIGNALS", "interruption", "ipc_kernel_manager", "kill_kernels", "mark_interrupted",
           "stop_kernels_on_signals"]
