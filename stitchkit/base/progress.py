"""Progress bars that go to the terminal, never into an executed notebook page.

Inside a Jupyter kernel (papermill executing a page) ``sys.stderr`` is forwarded into the
notebook, so a bar written there would land on the page. :func:`progress_bar` writes instead to
the kernel process's original standard error, which is the terminal that runs papermill; in a
plain Python process it writes to ``sys.stderr``. ``STITCHKIT_PROGRESS=0`` turns bars off.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import IO, Any

from tqdm import tqdm


@functools.lru_cache(maxsize=1)
def _kernel_terminal() -> IO[str] | None:
    fd = getattr(sys.stderr, "_original_stdstream_copy", None)
    if fd is None:
        return None
    try:
        return os.fdopen(os.dup(fd), "w", buffering=1)
    except OSError:
        return None


def terminal() -> IO[str] | None:
    """The stream that reaches the terminal: the kernel's original stderr, else ``sys.stderr``;
    None inside a kernel whose original stderr is unknown (then nothing is shown)."""
    if "ipykernel" in sys.modules and hasattr(sys.stderr, "_original_stdstream_copy"):
        return _kernel_terminal()
    if "ipykernel" in sys.modules and type(sys.stderr).__module__.startswith("ipykernel"):
        return None
    return sys.stderr


def enabled(requested: bool = True) -> bool:
    return requested and os.environ.get("STITCHKIT_PROGRESS", "1").strip().lower() not in ("0", "false", "no", "off")


def progress_bar(*, disable: bool = False, **kwargs: Any) -> tqdm:
    """A tqdm bar on the terminal (see the module docstring); same keywords as ``tqdm``."""
    stream = terminal()
    return tqdm(file=stream, disable=disable or stream is None or not enabled(), leave=False,
                dynamic_ncols=True, mininterval=1.0, **kwargs)


def say(message: str) -> None:
    """One line of status on the terminal (not on the page)."""
    stream = terminal()
    if stream is not None and enabled():
        print(message, file=stream, flush=True)
