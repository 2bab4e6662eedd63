"""The person's functions as they wrote them, between recorded cells.

A recorded cell runs its rewrite (transformer.py), so the functions and classes it
defines are made of rewritten code, whose calls go through porter's hooks. Left so, the
person's session would keep porter's code after the cell: a function's bytecode would
name the hooks, a later plain cell would run through them, and a function sent away by
value (joblib, dask, cloudpickle) would take porter along. So once a cell has run, each
function made of its rewrite gets the code of the same source compiled plainly (same
file name, same lines: the code a plain run makes), and porter keeps the rewritten code
beside it: a later recorded cell puts it back for its own run (`armed`), so that the
calls inside the person's functions are recorded there, and in its replays, as before.

The functions are found from the namespace: its functions, the classes the person
defined there (their methods, static and class methods, properties), instances of those
classes, decorated functions (``__wrapped__``, closures) and containers, within a bound.
"""

from __future__ import annotations

import ast
import contextlib
import dis
import functools
import inspect
import itertools
import sys
import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from porter_ext.record.hooks_importlib_bootstrap import HOOK_NAMES

#: objects looked at when searching a namespace for the functions of recorded cells
VISIT_LIMIT = 20_000
#: recorded cells whose plain code is kept (functions a later call makes need it)
KEPT_CELLS = 256

_HOOKS = frozenset(HOOK_NAMES)
_PROLOGUE = frozenset({"RESUME", "MAKE_CELL", "COPY_FREE_VARS", "RETURN_GENERATOR", "POP_TOP"})

_lock = threading.Lock()
#: function -> (its rewritten code, its plain code)
_twins: weakref.WeakKeyDictionary[types.FunctionType, tuple[types.CodeType, types.CodeType]]
_twins = weakref.WeakKeyDictionary()
#: file name of a recorded cell -> its plain code objects by (qualified name, first line)
_plain: OrderedDict[str, dict[tuple[str, int], list[types.CodeType]]] = OrderedDict()


def _nested(code: types.CodeType) -> Iterator[types.CodeType]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested(const)


def _start(code: types.CodeType) -> tuple[int, int] | None:
    """Where the code's body starts in the source (line, column): what tells two lambdas
    of one line apart."""
    for ins in dis.get_instructions(code):
        if ins.opname in _PROLOGUE or ins.positions is None:
            continue
        if ins.positions.lineno is not None and ins.positions.col_offset is not None:
            return ins.positions.lineno, ins.positions.col_offset
    return None


@functools.lru_cache(maxsize=4096)
def _rewritten(code: types.CodeType) -> bool:
    """Whether the code (or code nested in it) calls porter's hooks."""
    return bool(_HOOKS & set(code.co_names)) or any(_rewritten(c) for c in _nested(code))


def plain_code(
    source: str,
    filename: str,
    flags: int = 0,
    transformers: Iterable[Callable[[ast.Module], ast.Module]] = (),
) -> dict[tuple[str, int], list[types.CodeType]]:
    """The code objects of ``source`` compiled as a plain run compiles it (the same AST
    transformers and compiler flags), by (qualified name, first line)."""
    flags |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    transformers = list(transformers)
    if transformers:
        tree = compile(source, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
        for transformer in transformers:
            tree = transformer(tree)
        ast.fix_missing_locations(tree)
        module = compile(tree, filename, "exec", flags, dont_inherit=True)
    else:  # compiled from the text, as a plain run compiles it: no syntax tree is made
        module = compile(source, filename, "exec", flags, dont_inherit=True)
    index: dict[tuple[str, int], list[types.CodeType]] = {}
    for code in _nested(module):
        index.setdefault((code.co_qualname, code.co_firstlineno), []).append(code)
    return index


def _match(code: types.CodeType) -> types.CodeType | None:
    """The plain code of a rewritten code object of a recorded cell, if known."""
    with _lock:
        index = _plain.get(code.co_filename)
    if index is None:
        return None
    found = index.get((code.co_qualname, code.co_firstlineno), [])
    if len(found) > 1:
        start = _start(code)
        found = [c for c in found if _start(c) == start]
    if len(found) != 1:
        return None
    plain = found[0]
    same = plain.co_freevars == code.co_freevars and plain.co_argcount == code.co_argcount
    return plain if same and plain.co_flags == code.co_flags else None


def functions(
    namespace: Mapping[str, Any],
    wanted: Callable[[types.CodeType], bool],
    owned_class: Callable[[type], bool] | None = None,
    owned_module: Callable[[types.ModuleType], bool] | None = None,
) -> list[types.FunctionType]:
    """Functions reachable from ``namespace`` whose code is ``wanted``: through its
    functions (closures, ``__wrapped__``), the classes it owns (``owned_class``; default:
    defined in the namespace's module) and their instances, the modules it owns
    (``owned_module``; default: none) and containers, within `VISIT_LIMIT` objects."""
    home = namespace.get("__name__", "__main__")
    if owned_class is None:

        def owned_class(cls: type) -> bool:
            return cls.__module__ == home

    found: list[types.FunctionType] = []
    seen: set[int] = set()
    todo = list(namespace.values())
    budget = VISIT_LIMIT
    while todo and budget > 0:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        budget -= 1
        if isinstance(obj, types.FunctionType):
            if wanted(obj.__code__):
                found.append(obj)
                if owned_module is not None:  # its module's other functions
                    module = sys.modules.get(getattr(obj, "__module__", "") or "")
                    if module is not None and owned_module(module):
                        todo.append(module)
            todo.extend(c.cell_contents for c in obj.__closure__ or () if _filled(c))
            todo.extend(vars(obj).values())  # __wrapped__ (functools.wraps), attributes
        elif isinstance(obj, type):
            if _owned(owned_class, obj):  # a class of the person's: its methods
                todo.extend(vars(obj).values())
        elif isinstance(obj, types.ModuleType):
            if owned_module is not None and owned_module(obj):
                todo.extend(itertools.islice(vars(obj).values(), budget))
        elif isinstance(obj, (staticmethod, classmethod, types.MethodType)):
            todo.append(obj.__func__)
        elif isinstance(obj, property):
            todo.extend((obj.fget, obj.fset, obj.fdel))
        elif isinstance(obj, (functools.partial, functools.cached_property)):
            todo.append(obj.func)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(itertools.islice(obj, budget))
        elif isinstance(obj, dict):
            todo.extend(itertools.islice(obj.values(), budget))
        elif _owned(owned_class, type(obj)):  # an instance of the person's class
            todo.append(type(obj))
            with contextlib.suppress(TypeError):
                todo.extend(itertools.islice(vars(obj).values(), budget))
        elif callable(obj):  # a library's wrapper (jax.jit, lru_cache), read without running
            wrapped = inspect.getattr_static(obj, "__wrapped__", None)
            if isinstance(wrapped, types.FunctionType):
                todo.append(wrapped)
    return found


def _owned(owned_class: Callable[[type], bool], cls: type) -> bool:
    try:
        return bool(owned_class(cls))
    except Exception:  # noqa: BLE001 (an odd class of a library: not the person's)
        return False


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def restore(
    namespace: Mapping[str, Any],
    source: str,
    filename: str,
    flags: int = 0,
    transformers: Iterable[Callable[[ast.Module], ast.Module]] = (),
) -> int:
    """After the recorded cell ``source`` (compiled as ``filename``) ran in ``namespace``:
    every function there made of a recorded cell's rewrite gets its plain code back, and
    keeps its rewrite for `armed`. Returns how many functions were given their code."""
    with _lock:
        files = {*_plain, filename}
    found = functions(namespace, lambda code: code.co_filename in files and _rewritten(code))
    if any(f.__code__.co_filename == filename for f in found):  # the cell made functions
        index = plain_code(source, filename, flags, transformers)
        with _lock:
            _plain[filename] = index
            _plain.move_to_end(filename)
            while len(_plain) > KEPT_CELLS:
                _plain.popitem(last=False)
    count = 0
    for function in found:
        rewritten = function.__code__
        plain = _match(rewritten)
        if plain is None:
            continue
        function.__code__ = plain
        with _lock:
            _twins[function] = (rewritten, plain)
        count += 1
    return count


def is_rewritten(code: types.CodeType) -> bool:
    """Whether ``code`` (or code nested in it) is porter's rewrite."""
    return _rewritten(code)


def has_twin(function: types.FunctionType) -> bool:
    """Whether ``function`` has a rewritten twin kept beside its code."""
    with _lock:
        return function in _twins


def add_twin(function: types.FunctionType, rewritten: types.CodeType) -> None:
    """Keep ``rewritten`` as the twin of ``function``'s own code (a function of the
    person's written outside recorded cells: `person_code`)."""
    with _lock:
        _twins[function] = (rewritten, function.__code__)


#: functions armed while a cell runs (a function of the person's first met there), for
#: the `disarm` at its end
_late: list[types.FunctionType] = []


def arm_late(function: types.FunctionType) -> None:
    """Arm one function while a recorded cell runs; the cell's `disarm` disarms it."""
    with _lock:
        rewritten, plain = _twins.get(function, (None, None))
    if plain is not None and function.__code__ is plain:
        function.__code__ = rewritten
        _late.append(function)


def arm_late_all() -> None:
    """`arm` while a recorded cell runs (twins made during it); the cell's `disarm`
    disarms them."""
    _late.extend(arm())


def arm() -> list[types.FunctionType]:
    """Give the functions of earlier recorded cells their rewritten code (for the run of
    a recorded cell, so that the calls inside them are recorded); returns them, for
    `disarm`."""
    with _lock:
        twins = list(_twins.items())
    armed = []
    for function, (rewritten, plain) in twins:
        if function.__code__ is plain:
            function.__code__ = rewritten
            armed.append(function)
    return armed


def disarm(armed: Iterable[types.FunctionType]) -> None:
    """Give the functions `arm` armed (and those armed late in the cell) their plain code
    back (unless the cell gave one code of its own)."""
    late = list(_late)
    _late.clear()
    for function in [*armed, *late]:
        with _lock:
            rewritten, plain = _twins.get(function, (None, None))
        if plain is not None and function.__code__ is rewritten:
            function.__code__ = plain


@contextlib.contextmanager
def armed() -> Iterator[None]:
    """`arm` for the block, then `disarm`."""
    functions = arm()
    try:
        yield
    finally:
        disarm(functions)


@contextlib.contextmanager
def unarmed(
    namespace: Mapping[str, Any] | None = None,
    source: str = "",
    filename: str | None = None,
    flags: int = 0,
    transformers: Iterable[Callable[[ast.Module], ast.Module]] = (),
) -> Iterator[None]:
    """For the block, every function of a recorded cell runs its plain code (a call into
    code a compiler makes from bytecode: `porter_ext.record.compilers`), and afterwards gets
    back the code it had: the armed ones, and given ``namespace`` and the cell recording
    now (``source`` compiled as ``filename``, as `restore` takes them), the functions that
    cell made, given their plain code (and twins) first by `restore`."""
    with _lock:
        armed_before = {f for f, (rewritten, _) in _twins.items() if f.__code__ is rewritten}
    if namespace is not None and filename is not None:
        restore(namespace, source, filename, flags, transformers)
    with _lock:
        twins = list(_twins.items())
    changed = []
    for function, (rewritten, plain) in twins:
        was_armed = function in armed_before or rewritten.co_filename == filename
        if function.__code__ is rewritten or (was_armed and function.__code__ is plain):
            function.__code__ = plain
            changed.append((function, rewritten, plain))
    try:
        yield
    finally:
        for function, rewritten, plain in changed:
            if function.__code__ is plain:
                function.__code__ = rewritten


def _key(code: types.CodeType) -> tuple[str, int, bytes]:
    """What a rewritten code object is known by across processes (cloudpickle gives a
    function sent by value another file name: ``<dynamic-code>``)."""
    return (code.co_qualname, code.co_firstlineno, code.co_code)


def armed_plain_codes() -> bytes:
    """The plain code of every function armed now, marshalled, for a replay's worker on
    this machine (`adopt_plain_codes`): a function arrives there by value with its
    rewritten code, and a compiler that must trace its plain code (`compilers.py`) needs
    the code the person's run would have."""
    import marshal

    with _lock:
        pairs = [(r, p) for f, (r, p) in _twins.items() if f.__code__ is r]
    return marshal.dumps(tuple((_key(r), p) for r, p in pairs))


def adopt_plain_codes(namespace: Mapping[str, Any], data: bytes | None) -> int:
    """In a worker: give each function of ``namespace`` that arrived with rewritten code
    its plain code as twin (`armed_plain_codes`); returns how many."""
    import marshal

    if not data:
        return 0
    plain = dict(marshal.loads(data))
    count = 0
    for function in functions(namespace, _rewritten):
        code = function.__code__
        found = plain.get(_key(code))
        if found is None or has_twin(function) or found.co_freevars != code.co_freevars:
            continue
        with _lock:
            _twins[function] = (code, found)
        count += 1
    return count
