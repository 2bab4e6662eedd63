"""A generated package of array code, as big as asked, for porter lint's speed checks."""

from __future__ import annotations

from pathlib import Path

#: ``python -c PEAK_WRAPPER ARGS...``: porter's command line, printing the process's peak
#: resident size to stderr at exit (``VmHWM=<kB>``: ``ru_maxrss`` would count the
#: parent's pages from before the exec)
PEAK_WRAPPER = (
    "import sys\n"
    "from porter_ext.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    peak = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "    print(f'VmHWM={peak}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)

_HEADER = '''"""Generated module {index}."""

import numpy as np
import torch
from array_api_compat import array_namespace

'''
_BLOCK = """

def step_{index}_{n}(x, w):
    xp = array_namespace(x)
    y = xp.matmul(x, w) + xp.zeros(x.shape[-1])
    z = np.sum(np.asarray(y), 1)
    t = torch.arange(6.0).reshape(2, 3)
    m = t.max(dim=1)
    if torch.cuda.is_available():
        t = t.cuda()
    return xp.mean(y, axis=0), z, m, t.sum().item()
"""


def make_package(root: Path, lines: int = 5000, per_module: int = 100) -> int:
    """Write a package of at least ``lines`` lines under ``root``; returns the line count."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "__init__.py").write_text("")
    written = 0
    index = 0
    while written < lines:
        text = _HEADER.format(index=index)
        n = 0
        while text.count("\n") < per_module:
            text += _BLOCK.format(index=index, n=n)
            n += 1
        (root / f"mod_{index}.py").write_text(text)
        written += text.count("\n")
        index += 1
    return written
