"""Calls of what a compiler made: recorded as one call, run with the person's code as written.

torch.compile (dynamo) and numba compile a function from its bytecode, and TorchScript
runs a graph of its own. Dynamo and numba cannot compile porter's rewrite (its sites are
constants of a type they do not know, its hooks Python they will not trace), and porter
cannot see the calls any of them makes. So a call of such a callable is recorded as one
call (kind ``transformation``, with a note that the calls inside it are not recorded)
and runs with every function of the person's as written (`as_written.unarmed`): those
armed for the recorded cell, and those the cell itself made, whose plain code is made
the first time the cell calls each compiled callable. Nothing is kept in the site's
plain-call slot, so every call of it goes this way.

JAX's transformations (``jit``, ``vmap``, ``grad``) trace Python with tracers through
porter's hooks, and ``torch.jit.trace`` runs the function on real tensors: both are left
alone (their calls are recorded; under JAX as ``traced``). What they return is another
matter: a traced TorchScript function is a compiled callable like a scripted one.

Compiled callables are recognised without importing their libraries: by the attributes
torch.compile leaves on its wrapper, and by their types' modules and names.
"""

from __future__ import annotations

import inspect
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from porter_ext.backends import all_backends
from porter_ext.record import as_written
from porter_ext.record.resolve import Callee
from porter_ext.record.runners import FILENAMES, Runner

if TYPE_CHECKING:
    import ast

    from porter_ext.record.recorder import Recorder

#: what the recorder forces on a call of a compiled callable (see `Recorder.before`)
COMPILED = "compiled"

#: the library whose compiler is recognised here rather than by a backend (it is none)
_NUMBA = "numba"


@dataclass(frozen=True)
class CompiledCallee(Callee):
    """A callable a compiler made, as its calls are recorded: ``qualname`` names the
    compiler and what it compiled (``torch.compile(g)``), ``compiler`` the compiler."""

    compiler: str

    @property
    def note(self) -> str:
        return (
            f"{self.qualname} runs code {self.compiler} compiled: porter does not record "
            "the calls inside it (it runs your functions as written)"
        )


@dataclass(frozen=True)
class CellCode:
    """How the cell recording now was compiled, as `as_written.restore` takes it: what
    gives the functions it made their plain code in the middle of the cell. ``filename``
    None: the one registered for the cell once IPython compiles it (``%port on``)."""

    source: str
    filename: str | None
    flags: int = 0
    transformers: tuple[Callable[[ast.Module], ast.Module], ...] = ()


def compiled_callee(f: Any) -> CompiledCallee | None:
    """The callee of ``f`` where a compiler made it (torch.compile, TorchScript, numba),
    else None; never raises."""
    try:
        return _recognised(f)
    except Exception:  # noqa: BLE001 (an odd object of the person's: not compiled)
        return None


def _named(target: Any) -> str:
    name = getattr(target, "__qualname__", None)
    return name if isinstance(name, str) else type(target).__name__


def _recognised(f: Any) -> CompiledCallee | None:
    t = type(f)
    if t is types.MethodType:  # a method torch.compile wrapped (``@torch.compile`` in a class)
        return _recognised(f.__func__)
    for backend in all_backends():  # torch.compile, TorchScript
        found = backend.compiled(f)
        if found is not None:
            call, compiler, target = found
            name = call.rpartition(".")[2]
            return CompiledCallee(
                backend.name, "transformation", name, f"{call}({target})", compiler
            )
    if t is types.FunctionType:
        module = f.__module__
        if not isinstance(module, str) or module.partition(".")[0] != _NUMBA:
            return None
        # numba's decorators: one given signatures compiles the function it is given
        name = f.__name__
        return CompiledCallee(_NUMBA, "transformation", name, f"{_NUMBA}.{name}", _NUMBA)
    if t.__module__.partition(".")[0] == _NUMBA:  # a dispatcher (``numba.njit``), a ufunc
        target = _named(inspect.getattr_static(f, "py_func", f))
        return CompiledCallee(_NUMBA, "transformation", "jit", f"{_NUMBA}.jit({target})", _NUMBA)
    return None


#: recorder → the compiled callables (by id) it called already: the cell's functions were
#: given their plain code (and twins) for those
_scanned: weakref.WeakKeyDictionary[Recorder, set[int]] = weakref.WeakKeyDictionary()


def _cell_functions(rec: Recorder, f: Any, args: tuple, kwargs: dict) -> tuple:
    """The arguments of `as_written.unarmed` for a call of ``f``: with the cell recording
    now, the first time the cell calls ``f`` (the functions made since are found then);
    nothing after that."""
    seen = _scanned.setdefault(rec, set())
    code: CellCode | None = rec.cell_code
    if id(f) in seen or code is None or rec.namespace is None:
        return ()
    seen.add(id(f))
    filename = code.filename or FILENAMES.get(rec.cell)
    if filename is None:
        return ()
    namespace = rec.namespace
    # what the call reaches: the namespace, and what it is given (a function a decorator
    # is about to compile is in no namespace yet)
    reached = {"__name__": namespace.get("__name__", "__main__"), "": (namespace, f, args, kwargs)}
    return reached, code.source, filename, code.flags, code.transformers


def runner_as_written(rec: Recorder, run: Runner) -> Runner:
    """``run`` (the runner of a call of a compiled callable) with every function of the
    person's as written while it runs."""

    def run_as_written(f: Any, args: tuple, kwargs: dict) -> Any:
        __tracebackhide__ = True  # noqa: F841 (read by IPython's traceback formatter)
        with as_written.unarmed(*_cell_functions(rec, f, args, kwargs)):
            return run(f, args, kwargs)

    return run_as_written
