"""Installing porter's two kernelspecs: ``porter`` (IPython with the extension loaded, for
notebooks) and ``porter-worker`` (what replays run in).

A source checkout keeps them in ``kernels/``; an installed wheel has them under
``share/jupyter/kernels`` of its prefix (the package's data files put them there).
"""

from __future__ import annotations

import sys
from pathlib import Path

KERNEL_NAMES = ("porter", "porter-worker")


def kernel_source(name: str) -> Path:
    """The folder holding the kernelspec ``name`` that ships with porter."""
    for base in (Path(__file__).resolve().parent.parent / "kernels",
                 Path(sys.prefix) / "share" / "jupyter" / "kernels"):  # fmt: skip
        if (base / name / "kernel.json").is_file():
            return base / name
    raise FileNotFoundError(f"porter's {name!r} kernelspec is not shipped with this install")


def install_kernels(*, user: bool = False, prefix: str | None = None) -> list[str]:
    """Install both kernelspecs for this user (``user``), under ``prefix``, or system-wide;
    the folders they went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    return [
        manager.install_kernel_spec(str(kernel_source(name)), name, user=user, prefix=prefix)
        for name in KERNEL_NAMES
    ]
