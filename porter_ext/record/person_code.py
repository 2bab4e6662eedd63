"""The person's code written outside the recorded cell: functions defined in plain cells
and in Python files under the person's folders.

Research code rarely sits only in the cell being ported: helpers live in earlier plain
cells and models in ``.py`` files beside the notebook. Their calls are the person's to
port, so a recorded cell records them too. Each such function gets a rewritten twin,
compiled once from its source (the cell's text as IPython cached it, or the file) with
the recorder's transformer (`compiled.rewrite_tree`), kept beside it by `as_written`,
which puts it in place for the run of a recorded cell only and gives the function its
own code back afterwards. Between recorded cells nothing of porter's runs in the
person's code: a module runs the code Python compiled from the file.

The person's folders are the notebook's folder (Jupyter names the notebook in
``JPY_SESSION_NAME``), the working directory, and folders the person adds
(``%port paths add DIR``, ``--paths DIR``), resolved through symbolic links; a file
there is the person's unless it lies in the interpreter's own trees (the standard library,
site-packages, the virtual environment) or in porter. A file that changed since Python
compiled the function, or that cannot be read as Python source, is left unrecorded with
one line saying so; the person's import and call run as without porter.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import site
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from porter_ext.record import as_written, resolve
from porter_ext.record.compiled import rewrite_module
from porter_ext.record.hooks_importlib_bootstrap import bind
from porter_ext.record.runners import register_cell_file

#: IPython's cells, as a recorded cell's session resolves them: code file name →
#: (execution count, cell code as compiled, compiler flags, AST transformers)
CellSource = tuple[int, str, int, list]
_cell_sources: Callable[[str], CellSource | None] | None = None

_lock = threading.Lock()
_extra: tuple[str, ...] = ()
_scoped: list[tuple[str, ...]] = []
#: file name → the person's real path, or None (cached per set of folders)
_verdicts: dict[str, str | None] = {}
_verdicts_for: tuple[str, ...] | None = None
#: a written file's code: file name → (digest of its source, twin index or None)
_compiled: dict[str, tuple[str, dict | None]] = {}
#: the files whose trouble was told (file name, digest): told once
_told: set[tuple[str, str]] = set()
#: site label of a file → its path as views show it (relative to the notebook's folder)
FILE_LABELS: dict[str, str] = {}

_PORTER_DIR = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass(frozen=True)
class Written:
    """Where a function's source is: its site label (the defining cell's execution count,
    or the file's real path), the source, and how it compiles."""

    label: int | str
    source: str
    flags: int = 0
    transformers: tuple = ()


class Unreadable(Exception):
    """A file of the person's porter cannot read as the source of its code."""


def configure(
    *,
    extra: Iterable[str] | None = None,
    cell_sources: Callable[[str], CellSource | None] | None | bool = False,
) -> None:
    """Set the folders the person added (``extra``) and how a plain cell's source is
    found (``cell_sources``: IPython's compiler cache, given by the session)."""
    global _extra, _cell_sources
    with _lock:
        if extra is not None:
            _extra = tuple(dict.fromkeys(os.path.realpath(os.path.expanduser(p)) for p in extra))
        if cell_sources is not False:
            _cell_sources = cell_sources  # type: ignore[assignment]
    _forget_verdicts()


def added() -> tuple[str, ...]:
    """The folders the person added (`configure`)."""
    return _extra


def missing_folders(paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` that are not folders (what ``--paths`` says once, in a line)."""
    return [p for p in paths if not os.path.isdir(os.path.expanduser(p))]


@contextlib.contextmanager
def more_paths(paths: Iterable[str]) -> Iterator[None]:
    """The person's folders with ``paths`` added, for one cell (``%%port --paths``)."""
    real = tuple(os.path.realpath(os.path.expanduser(p)) for p in paths)
    if not real:
        yield
        return
    with _lock:
        _scoped.append(real)
    _forget_verdicts()
    try:
        yield
    finally:
        with _lock:
            _scoped.remove(real)
        _forget_verdicts()


def _forget_verdicts() -> None:
    with _lock:
        _verdicts.clear()
    resolve.clear_caches()  # which module is a library depends on the folders


def notebook_folder() -> str:
    """The notebook's folder where Jupyter names the notebook, else the working directory."""
    named = os.environ.get("JPY_SESSION_NAME", "")
    if named and os.path.isfile(named):
        return os.path.dirname(os.path.realpath(named))
    return os.path.realpath(os.getcwd())


_folders_key: tuple | None = None
_folders: tuple[str, ...] = ()


def folders() -> tuple[str, ...]:
    """The person's folders, real paths: the notebook's, the working directory's, added
    (resolved again only when the working directory, the notebook or the list changes)."""
    global _folders_key, _folders
    key = (os.getcwd(), os.environ.get("JPY_SESSION_NAME", ""), _extra, tuple(_scoped))
    if key != _folders_key:
        found = [notebook_folder(), os.path.realpath(key[0]), *_extra]
        for scoped in _scoped:
            found.extend(scoped)
        _folders_key, _folders = key, tuple(dict.fromkeys(found))
    return _folders


def _not_persons() -> tuple[str, ...]:
    """Trees that hold no person's code: the interpreter's, site-packages, porter."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, _PORTER_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            roots.add(sysconfig.get_paths()[key])
    with contextlib.suppress(AttributeError):
        roots.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        roots.add(site.getusersitepackages())
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


_EXCLUDED = _not_persons()


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(os.path.join(folder, ""))


def person_file(filename: str, current: tuple[str, ...] | None = None) -> str | None:
    """The real path of ``filename`` when it is a Python file of the person's (under the
    person's folders, through links, outside the interpreter's trees), else None;
    ``current``: the folders when the caller has them (`folders`)."""
    global _verdicts_for
    if not filename or filename.startswith("<") or not filename.endswith(".py"):
        return None
    current = folders() if current is None else current
    with _lock:
        if _verdicts_for != current:
            _verdicts.clear()
            _verdicts_for = current
        if filename in _verdicts:
            return _verdicts[filename]
    real = os.path.realpath(filename)
    verdict = None
    parts = real.split(os.sep)
    if (
        os.path.isfile(real)
        and "site-packages" not in parts
        and "dist-packages" not in parts
        and not any(real.startswith(root) for root in _EXCLUDED)
        and any(_inside(real, folder) for folder in current)
    ):
        verdict = real
    with _lock:
        _verdicts[filename] = verdict
    return verdict


def linked_out(filename: str) -> str | None:
    """Where ``filename`` leads when it lies in the person's folders but is a link to a
    file outside them (then it is not the person's code), else None."""
    if not filename or filename.startswith("<") or person_file(filename) is not None:
        return None
    return _linked_out(filename, folders())


@functools.lru_cache(maxsize=4096)
def _linked_out(filename: str, current: tuple[str, ...]) -> str | None:
    here = os.path.abspath(filename)
    real = os.path.realpath(filename)
    if real != here and any(_inside(here, folder) for folder in current):
        return real
    return None


def tell_linked_out(f: Any, notes: list[str]) -> None:
    """One line, once per file, for a function of a linked file outside the folders that
    a recorded cell calls: it is recorded as another library's."""
    for function in callee_functions(f):
        filename = function.__code__.co_filename
        real = linked_out(filename)
        key = (filename, "linked out")
        if real is None or key in _told:
            continue
        _told.add(key)
        notes.append(
            f"porter: {shown_path(os.path.abspath(filename))} is a link to {real}, outside "
            "your folders: its functions are not recorded as your code (%port paths add "
            "its folder to record them)"
        )


def person_module(module: Any) -> bool:
    """Whether ``module`` (a module object) was loaded from a file of the person's."""
    filename = getattr(module, "__file__", None)
    return isinstance(filename, str) and person_file(filename) is not None


def persons_module_name(name: str) -> bool:
    """Whether the loaded module ``name`` is the person's (`person_module`)."""
    module = sys.modules.get(name)
    return module is not None and person_module(module)


def shown_path(real: str) -> str:
    """A file as views name it: relative to the notebook's folder (``mymod.py``), or
    absolute where that is shorter to read (outside it)."""
    relative = os.path.relpath(real, notebook_folder())
    return real if relative.startswith(os.pardir + os.sep + os.pardir) else relative


def read_source(real: str) -> str:
    """The text of a Python file of the person's, decoded as Python decodes it; raises
    `Unreadable` naming why not (what every reader of the person's files says)."""
    try:
        with open(real, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise Unreadable(f"cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in data:
        raise Unreadable("is not Python source (it holds NUL bytes)")
    try:
        return importlib.util.decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        raise Unreadable(f"is not readable as Python source ({type(exc).__name__})") from None


def _written(code: types.CodeType) -> Written | None:
    """Where ``code`` is written, when that is the person's: a plain cell or a file."""
    filename = code.co_filename
    resolver = _cell_sources
    if resolver is not None:
        cell = resolver(filename)
        if cell is not None:
            count, source, flags, transformers = cell
            return Written(count, source, flags, tuple(transformers))
    real = person_file(filename)
    if real is None:
        return None
    FILE_LABELS.setdefault(real, shown_path(real))
    return Written(real, read_source(real))


def _index(code: types.CodeType, written: Written, keyed: bool = True) -> dict | None:
    """The twins of the code objects of ``code``'s file: key → (plain, rewritten);
    compiled once per source (None: it does not compile)."""
    digest = hashlib.blake2b(written.source.encode("utf-8", "surrogatepass")).hexdigest()
    filename = code.co_filename
    key = filename if keyed else f"{filename}\0{digest}"
    with _lock:
        hit = _compiled.get(key)
    if hit is not None and hit[0] == digest:
        return hit[1]
    try:
        plain = as_written.plain_code(written.source, filename, written.flags, written.transformers)
        rewritten = rewrite_module(
            written.source, written.label, filename, written.flags, written.transformers
        )
        index = {key: (plain[key], rewritten.get(key, [])) for key in plain}
    except (SyntaxError, ValueError):
        index = None
    with _lock:
        _compiled[key] = (digest, index)
    return index


#: other texts a file's code may have been compiled from (`also_written`): real path →
#: sources
_also: dict[str, list[str]] = {}


def also_written(real: str, source: str) -> None:
    """Code compiled from ``source`` under the file name ``real`` (porter fix's
    verification runs a file's rewrite) is recorded as the file's own code is."""
    sources = _also.setdefault(real, [])
    if source not in sources:
        sources.append(source)
        del sources[:-4]


def _twin(code: types.CodeType, written: Written) -> types.CodeType | None:
    """The rewritten twin of ``code``, when the source is the one it was compiled from
    (the file as it is now, or a text `also_written` under its name)."""
    try:
        return _twin_from(code, written)
    except Unreadable:
        if not isinstance(written.label, str):
            raise
        for other in _also.get(written.label, []):
            with contextlib.suppress(Unreadable):
                return _twin_from(code, Written(written.label, other), keyed=False)
        raise


def _twin_from(code: types.CodeType, written: Written, keyed: bool = True) -> types.CodeType | None:
    index = _index(code, written, keyed)
    if index is None:
        raise Unreadable("does not compile now")
    plains, rewrittens = index.get((code.co_qualname, code.co_firstlineno), ([], []))
    for plain, rewritten in zip(plains, rewrittens, strict=False):
        if plain.co_code != code.co_code or plain.co_names != code.co_names:
            continue
        same = (
            rewritten.co_freevars == code.co_freevars
            and rewritten.co_argcount == code.co_argcount
            and rewritten.co_flags == code.co_flags
        )
        return rewritten if same else None
    raise Unreadable("changed since it was imported")


def _tell(code: types.CodeType, written: Written | None, why: str, notes: list[str]) -> None:
    filename = code.co_filename
    key = (filename, why)
    if key in _told:
        return
    _told.add(key)
    real = person_file(filename) or filename
    shown = shown_path(real) if written is None or isinstance(written.label, str) else filename
    notes.append(
        f"porter: {shown} {why}: its functions are not recorded "
        "(they run as written; reload the module or restart the kernel to record them)"
    )


def take(function: types.FunctionType, notes: list[str]) -> bool:
    """Give ``function`` a rewritten twin when it is the person's code written outside
    the recorded cell and has none; returns whether it has one now."""
    if as_written.has_twin(function):
        return True
    code = function.__code__
    if as_written.is_rewritten(code):
        return False
    written = None
    try:
        written = _written(code)
        if written is None:
            return False
        twin = _twin(code, written)
    except Unreadable as why:
        _tell(code, written, str(why), notes)
        return False
    if twin is None:
        return False
    if isinstance(written.label, str):
        register_cell_file(written.label, code.co_filename)
    bind(function.__globals__)  # the hooks where the twin looks them up
    as_written.add_twin(function, twin)
    _twinned_codes.add(code)
    return True


def _owned_class(home: str) -> Callable[[type], bool]:
    def owned(cls: type) -> bool:
        module = getattr(cls, "__module__", None)
        return module == home or (isinstance(module, str) and persons_module_name(module))

    return owned


def _candidate(code: types.CodeType) -> bool:
    filename = code.co_filename
    if as_written.is_rewritten(code):
        return False
    resolver = _cell_sources
    if resolver is not None and resolver(filename) is not None:
        return True
    return person_file(filename) is not None


#: the person's modules looked through, as they were then (a module that gains or loses
#: names is looked through again)
_looked: dict[str, tuple[int, int]] = {}


def _unseen_module(module: types.ModuleType) -> bool:
    if not person_module(module):
        return False
    state = (id(module.__dict__), len(module.__dict__))
    name = getattr(module, "__name__", "")
    if _looked.get(name) == state:
        return False
    _looked[name] = state
    return True


def _untwinned(code: types.CodeType) -> bool:
    return code not in _twinned_codes and _candidate(code)


#: plain code objects that have a twin (what a namespace search skips at once)
_twinned_codes: set[types.CodeType] = set()


def reachable(namespace: Mapping[str, Any], notes: list[str]) -> int:
    """Give a twin to every function of the person's written outside the recorded cell
    that ``namespace`` reaches (its functions, the person's classes, instances and
    modules not looked through since they changed); returns how many got one."""
    home = namespace.get("__name__", "__main__")
    found = as_written.functions(namespace, _untwinned, _owned_class(home), _unseen_module)
    return sum(take(function, notes) for function in found)


def callee_functions(f: Any) -> list[types.FunctionType]:
    """The Python functions a call of ``f`` runs first: itself, a method's function, a
    class's ``__init__``/``__new__``, an instance's ``__call__``."""
    if isinstance(f, types.FunctionType):
        return [f]
    if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType):
        return [f.__func__]
    owner = f if isinstance(f, type) else type(f)
    names = ("__init__", "__new__", "__call__") if isinstance(f, type) else ("__call__",)
    found = []
    for name in names:
        attribute = owner.__dict__.get(name)
        if isinstance(attribute, staticmethod | classmethod):
            attribute = attribute.__func__
        if isinstance(attribute, types.FunctionType):
            found.append(attribute)
    return found


def persons(f: Any) -> bool:
    """Whether calling ``f`` runs code of the person's written outside the cell (then it
    is not another library's function: its calls are recorded instead)."""
    functions = callee_functions(f)
    return bool(functions) and all(
        as_written.has_twin(fn) or _candidate(fn.__code__) for fn in functions
    )


def arm_now(f: Any, notes: list[str]) -> None:
    """A recorded cell calls ``f``, the person's: twin and arm what it runs first and the
    module it lives in (a function imported in the cell itself)."""
    for function in callee_functions(f):
        new = not as_written.has_twin(function)
        if take(function, notes):
            as_written.arm_late(function)
        module = sys.modules.get(getattr(function, "__module__", "") or "")
        if new and module is not None and _unseen_module(module):
            reachable(vars(module), notes)  # the functions it calls there
            as_written.arm_late_all()


def rewritten(function: types.FunctionType) -> bool:
    """Whether ``function`` runs porter's rewrite now (tests: never outside a cell)."""
    return as_written.is_rewritten(function.__code__)


def loaded_modules() -> tuple[tuple[str, str], ...]:
    """The person's modules this process has loaded: (name, real path of the file)."""
    found = []
    current = folders()  # once, not per module
    for name, module in list(sys.modules.items()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            real = person_file(filename, current)
            if real is not None:
                found.append((name, real))
    return tuple(found)


def forget_other_files(modules: Iterable[tuple[str, str]]) -> None:
    """A worker: drop each of the person's ``modules`` it holds loaded from another file
    (the person's kernel now imports that name from elsewhere), so that the replay's
    inputs import it again as the kernel has it."""
    for name, real in modules:
        module = sys.modules.get(name)
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str) and os.path.realpath(filename) != real:
            del sys.modules[name]


resolve.persons_module = persons_module_name  # the person's modules are no library
