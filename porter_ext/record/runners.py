"""Runners: the one-line functions that perform a recorded call or operation, placed on
the cell's own line (its file name and line number), so that a warning the library
raises at its caller (NumPy's ``divide by zero``) points at the person's line.
"""

from __future__ import annotations

import types
from typing import Any

from porter_ext.record.hooks_importlib_bootstrap import FALLBACK_RUNNERS, RUNNERS

#: cell → the file name its code was compiled with (a few short strings per session)
FILENAMES: dict[int | str, str] = {}


def register_cell_file(cell: int | str, filename: str) -> None:
    """Remember the file name of a cell's code, for runners placed on its lines."""
    FILENAMES[cell] = filename


_RUNNER_CODE: dict[str, types.CodeType] = {}


def compile_runner(filename: str | None, line: int, template: str, namespace: dict | None) -> Any:
    """A runner whose one line is ``line`` of ``filename``: the template's code, compiled
    once, moved there (``CodeType.replace``: no compile per site)."""
    if filename is None or namespace is None or line < 1:
        return FALLBACK_RUNNERS[template]
    code = _RUNNER_CODE.get(template)
    if code is None:
        source = f"def __porter_run__(a, b, c): __tracebackhide__ = True; {RUNNERS[template]}"
        module = compile(source, "<porter runner>", "exec", dont_inherit=True)
        code = _RUNNER_CODE[template] = next(
            c for c in module.co_consts if isinstance(c, types.CodeType)
        )
    placed = code.replace(co_filename=filename, co_firstlineno=line)
    return types.FunctionType(placed, namespace, "__porter_run__")
