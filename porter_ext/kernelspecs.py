"""Installing porter's kernelspecs: ``porter`` (IPython with the extension loaded, for
notebooks) and, on request, ``porter-worker`` (what replays run in).

A source checkout keeps ``porter`` in ``kernels/``; an installed wheel has it under
``share/jupyter/kernels`` of its prefix (the package's data files put it there). The
worker's spec lives inside the package (`worker_kernel.kernel_spec_file`): local workers
start from it directly, so it is not where the Launcher and the kernel picker list
kernels. A gateway's host that is to run porter's replays installs it with ``worker``.
"""

from __future__ import annotations

import sys
from pathlib import Path

KERNEL_NAMES = ("porter", "porter-worker")


def kernel_source(name: str) -> Path:
    """The folder holding the kernelspec ``name`` that ships with porter."""
    if name == "porter-worker":
        from porter_ext.replay.worker_kernel import kernel_spec_file

        return kernel_spec_file().parent
    for base in (
        Path(__file__).resolve().parent.parent / "kernels",
        Path(sys.prefix) / "share" / "jupyter" / "kernels",
    ):
        if (base / name / "kernel.json").is_file():
            return base / name
    raise FileNotFoundError(f"porter's {name!r} kernelspec is not shipped with this install")


def install_kernels(
    *, user: bool = False, prefix: str | None = None, worker: bool = False
) -> list[str]:
    """Install the ``porter`` kernelspec (and ``porter-worker`` with ``worker``) for this
    user (``user``), under ``prefix``, or system-wide; the folders they went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    names = KERNEL_NAMES if worker else KERNEL_NAMES[:1]
    return [
        manager.install_kernel_spec(str(kernel_source(name)), name, user=user, prefix=prefix)
        for name in names
    ]
