"""Code that IPython runs on the cell's behalf: ``%time y = f(x)`` reads ``x``, binds ``y``.

After IPython's input transformation a ``%time`` line is a call
``get_ipython().run_line_magic('time', 'y = f(x)')``: its argument is Python code run in
the cell's namespace, so the analysis must read it like the cell's own statements.
``%timeit`` runs its code inside a function of its own: what it assigns is never bound in
the cell (``%timeit counts = f(x)`` leaves ``counts`` as it was), so a later line reading
that name reads the cell's input.
"""

from __future__ import annotations

import ast
import re

#: IPython magics whose argument is Python code run in the cell's namespace
_CODE_MAGICS = frozenset({"time", "timeit"})
#: those of them whose assignments bind names of the cell
_BINDING_MAGICS = frozenset({"time"})
_TIMEIT_OPTIONS = re.compile(r"^\s*(?:-[nrp]\s*\S+\s*|-[oqct]\s*)*")


def magic_code(call: ast.Call) -> tuple[list[ast.stmt], bool] | None:
    """The statements of ``get_ipython().run_line_magic('time', 'y = f(x)')`` and friends,
    and whether what they assign is bound in the cell's namespace."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in ("run_line_magic", "run_cell_magic")
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
    ):
        return None
    texts = [a.value for a in call.args if isinstance(a, ast.Constant)]
    if len(texts) < 2 or texts[0] not in _CODE_MAGICS:
        return None
    parts = [_TIMEIT_OPTIONS.sub("", texts[1], count=1), *texts[2:]]
    stmts: list[ast.stmt] = []
    for code in parts:
        try:
            stmts += ast.parse(code).body
        except SyntaxError:
            continue
    return stmts, texts[0] in _BINDING_MAGICS
