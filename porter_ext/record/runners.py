"""Runners: the one-line functions that perform a recorded call or operation, placed on
the cell's own line (its file name and line number), so that a warning the library
raises at its caller (NumPy's ``divide by zero``) points at the person's line. Each
runner is a template (`RUNNERS`: what it does with its three arguments) compiled once and
moved to the site's line; sites whose cell file is unknown get the fallback runners,
compiled in the hooks' own file so that their frames are hidden like the hooks'.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from porter_ext.record import hooks_importlib_bootstrap as hooks
from porter_ext.record.operator_names import BINARY_SYMBOLS, OPERATORS, UNARY_SYMBOLS

_BOXED = frozenset(BINARY_SYMBOLS) | frozenset(UNARY_SYMBOLS)

#: a runner: performs one recorded operation on its three arguments (see `RUNNERS`)
Runner = Callable[[Any, Any, Any], Any]


def op_template(name: str, boxed: bool) -> str:
    """The runner template of operator ``name``: applied to ``(a, b)``, or to the operands
    popped from the list ``a`` when ``boxed`` (see `op`)."""
    return f"box{name}" if boxed and name in _BOXED else name


#: what a runner does with its three arguments (see `Recorder.runner`); an operator's
#: own runner (keyed by its name) applies it as Python syntax to the operands it pops
#: from a list in ``a`` (see `op`)
RUNNERS = {
    "call": "return a(*b, **c)",
    "two": "return a(b, c)",
    "one": "return a(b)",
    "get": "return a[b]",
    "set": "a[b] = c",
    **{f"box{name}": f"return a.pop() {symbol} a.pop()" for name, symbol in BINARY_SYMBOLS.items()},
    **{f"box{name}": f"return {symbol}a.pop()" for name, symbol in UNARY_SYMBOLS.items()},
    **{name: f"return a {symbol} b" for name, symbol in BINARY_SYMBOLS.items()},
    **{name: f"return {symbol}a" for name, symbol in UNARY_SYMBOLS.items()},
    **{
        f"__i{name[2:]}": f"a {symbol}= b; return a"
        for name, symbol in BINARY_SYMBOLS.items()
        if f"__i{name[2:]}" in OPERATORS
    },
}


def _fallback(body: str) -> types.FunctionType:
    namespace: dict = {}
    source = f"def __porter_run__(a, b, c):\n    __tracebackhide__ = True\n    {body}\n"
    exec(compile(source, hooks.__file__, "exec"), namespace)  # the hooks' file name
    return namespace["__porter_run__"]


#: runners for sites whose cell file is unknown: their frames are hidden like the hooks'
FALLBACK_RUNNERS = {name: _fallback(body) for name, body in RUNNERS.items()}

#: cell → the file name its code was compiled with (a few short strings per session)
FILENAMES: dict[int | str, str] = {}


def register_cell_file(cell: int | str, filename: str) -> None:
    """Remember the file name of a cell's code, for runners placed on its lines."""
    FILENAMES[cell] = filename


_RUNNER_CODE: dict[str, types.CodeType] = {}


def compile_runner(
    filename: str | None, line: int, template: str, namespace: dict | None
) -> Runner:
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
