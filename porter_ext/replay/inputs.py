"""The namespace a replay runs in, built from the person's namespace without touching it.

Arrays move to the target backend (zero-copy through DLPack where possible), also inside
lists, tuples and dicts; an input the cell may modify in place is copied on the target
first whenever its conversion shares memory with the person's array, so a replay can
never write into the person's data. Names bound to an array API namespace (``xp``,
``jnp``, NumPy ≥ 2) are rebound to the target's namespace when the target is another
library (on the original's own library they stay the person's). ``torch``, ``cupy`` and
``jax`` are not: a cell that calls ``torch.max`` directly must fail on a JAX replay,
since that failure is exactly the porting blocker to report. The person's functions are
re-created over the replay namespace so that they read the replay's ``xp`` and inputs.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from porter_ext.backends import (
    Backend,
    BackendSpec,
    Conversion,
    ConversionError,
    all_backends,
    backend_for,
    convert_to,
    device_of,
    get_backend,
    namespace_backend,
    namespace_owner,
)
from porter_ext.record.strict import NamespaceView, recorded_namespace, unwrap_namespace
from porter_ext.replay.analysis import CellIO
from porter_ext.replay.draws import moved_draws, moved_generator
from porter_ext.replay.user_functions import (
    may_mutate,
    user_callables,
    user_functions,
    user_globals,
)

#: containers are searched for arrays this deep, and no further than this many items
MAX_DEPTH = 4
MAX_ITEMS = 10_000
_IMMUTABLE_LEAVES = (int, float, complex, str, bytes, bool, type(None), frozenset, range)


@dataclass
class ReplayInputs:
    """The replay namespace and what building it did, for the report."""

    namespace: dict[str, Any]
    conversions: dict[str, Conversion] = field(default_factory=dict)
    devices: list[str] = field(default_factory=list)
    rebound: list[str] = field(default_factory=list)
    recreated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def labels(self) -> dict[str, str]:
        """Name path → ``zero_copy`` or ``copy: <reason>``, as the report shows it."""
        return {p: conversion_label(c) for p, c in self.conversions.items()}


def conversion_label(c: Conversion) -> str:
    return "zero_copy" if c.mode == "zero_copy" else f"copy: {c.reason or 'copied'}"


def is_array_input(value: object) -> bool:
    """An array to convert. NumPy scalars behave as numbers (``range(n)``): kept as they are."""
    backend = backend_for(value)
    return backend is not None and not isinstance(value, backend.scalar_types())


def is_array_namespace(value: object) -> bool:
    """Whether a name is bound to an array API namespace that a replay should rebind
    (also a recorded or strict view of a library's main module, ``torch`` included)."""
    if isinstance(value, NamespaceView):
        real = unwrap_namespace(value)
        name = getattr(real, "__name__", "")
        return backend_of_namespace_root(name) or is_array_namespace(real)
    if not isinstance(value, types.ModuleType):
        return False
    return namespace_backend(value.__name__) is not None


def backend_of_namespace_root(module_name: str) -> bool:
    """Whether ``module_name`` is a library's own top-level namespace (``torch``,
    ``jax.numpy``), which porter's namespace views may wrap."""
    return any(b.namespaces and b.namespaces[0].module == module_name for b in all_backends())


def build_namespace(
    io: CellIO,
    person_ns: Mapping[str, Any],
    spec: BackendSpec,
    *,
    max_depth: int = MAX_DEPTH,
    moves_draws: bool = False,
) -> ReplayInputs:
    """The namespace to replay a cell in on ``spec``. Raises BackendUnavailable (or
    DeviceUnavailable) when the target is not there, ConversionError naming the input
    when an input cannot move to it. ``person_ns`` is only read."""
    backend = get_backend(spec.library)
    backend.resolve_device(spec.device)  # fails early, with the reason, when absent
    names = [n for n in (*io.inputs, *io.builtins) if n in person_ns]
    functions = user_functions(person_ns)
    pulled = user_globals([n for n in names if n in functions], person_ns, functions)
    callables = user_callables(person_ns)
    mutated = set(io.mutated_given(n for n in io.passed if n in callables))
    mutated |= {g for f, gs in pulled.items() if may_mutate(functions[f], functions) for g in gs}
    all_names = dict.fromkeys([*names, *(g for gs in pulled.values() for g in gs)])
    result = ReplayInputs(namespace=_base(person_ns))
    builder = _Builder(backend, spec, result, max_depth)
    for name in all_names:
        value = person_ns[name]
        if name in functions:
            continue  # re-created below, once the namespace holds everything they read
        if is_array_namespace(value):
            rebound = _rebind(value, backend)
            result.namespace[name] = moved_draws(value, rebound, backend, spec.device, moves_draws)
            result.rebound.append(name)
        elif isinstance(value, types.ModuleType):
            result.namespace[name] = moved_draws(value, value, backend, spec.device, moves_draws)
        else:
            value = builder.walk(value, name, 0, name in mutated)
            result.namespace[name] = moved_generator(value, backend, spec.device)
    for name in all_names:
        if name in functions:
            result.namespace[name] = recreate(functions[name], result.namespace)
            result.recreated.append(name)
    result.notes = builder.summary()
    return result


def _base(person_ns: Mapping[str, Any]) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": person_ns.get("__name__", "__main__")}
    if "__builtins__" in person_ns:
        ns["__builtins__"] = person_ns["__builtins__"]
    return ns


def _rebind(value: object, backend: Backend) -> object:
    """The namespace a replay on ``backend`` binds where the person bound ``value``: on
    the library's own replay (the control) the person's module itself, so that the
    replay runs exactly what the original ran (``np.var(x, ddof=1)`` is NumPy's, not
    array-api-compat's); the target's array API namespace on another library."""
    real = unwrap_namespace(value)
    mine = namespace_owner(getattr(real, "__name__", "")) is backend
    target = real if mine else backend.namespace()
    if isinstance(value, NamespaceView):
        return recorded_namespace(target, strict=value._strict, version=value._version)
    return target


def recreate(f: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    """``f`` with ``namespace`` as its globals, so that it reads the replay's names."""
    g = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = dict(f.__kwdefaults__) if f.__kwdefaults__ else None
    g.__dict__.update(f.__dict__)
    g.__qualname__, g.__doc__, g.__module__ = f.__qualname__, f.__doc__, f.__module__
    g.__annotations__ = dict(f.__annotations__)
    return g


class _Builder:
    """Converts the arrays of one input value, recursively, recording each conversion."""

    def __init__(self, backend: Backend, spec: BackendSpec, result: ReplayInputs, depth: int):
        self.backend, self.spec, self.result, self.max_depth = backend, spec, result, depth
        self.notes: dict[str, list[str]] = {}

    def walk(self, value: Any, path: str, depth: int, mutable: bool) -> Any:
        if is_array_input(value):
            return self.array(value, path, mutable)
        kind = type(value)
        if depth < self.max_depth and (kind in (list, tuple, dict) or _is_namedtuple(value)):
            if len(value) > MAX_ITEMS:
                self.note(f"not searched for arrays: more than {MAX_ITEMS} items", path)
                return copy.copy(value) if mutable else value
            if isinstance(value, dict):
                items = {
                    k: self.walk(v, f"{path}[{k!r}]", depth + 1, mutable) for k, v in value.items()
                }
                changed = any(items[k] is not value[k] for k in value)
                return items if changed or mutable else value
            seq = [self.walk(v, f"{path}[{i}]", depth + 1, mutable) for i, v in enumerate(value)]
            if not mutable and all(a is b for a, b in zip(seq, value, strict=True)):
                return value
            return type(value)(*seq) if _is_namedtuple(value) else kind(seq)
        if mutable and not isinstance(value, _IMMUTABLE_LEAVES + (types.ModuleType, type)):
            if isinstance(value, types.FunctionType | types.BuiltinFunctionType):
                return value
            try:  # the cell may change this object: give the replay its own
                return copy.copy(value)
            except Exception:
                self.note(
                    "shared with the replay (it could not be copied), which may modify it", path
                )
        return value

    def array(self, value: Any, path: str, mutable: bool) -> Any:
        try:
            conv = convert_to(value, self.backend, self.spec.device)
        except ConversionError as error:
            raise ConversionError(f"input {path!r}: {error}") from None
        if mutable and conv.shares_memory and self.backend.mutable:
            copied = self.backend.copy(conv.value)
            reason = f"the cell may modify {path} in place; copied so the original stays untouched"
            conv = Conversion(copied, "copy", reason, False, conv.notes)
        self.result.conversions[path] = conv
        for text in conv.notes:
            self.note(text, path)
        device = device_of(conv.value)
        if device is not None and device not in self.result.devices:
            self.result.devices.append(device)
        return conv.value

    def note(self, text: str, path: str) -> None:
        self.notes.setdefault(text, []).append(path)

    def summary(self) -> list[str]:
        return [f"{text} ({', '.join(paths)})" for text, paths in self.notes.items()]


def snapshot(value: Any, depth: int = 0) -> Any:
    """``value`` as it is now, sharing no array buffer with it: arrays copied on their own
    backend and device, lists, tuples and dicts rebuilt (bounded depth), anything else as
    it is. What the session keeps of an input the cell may change in place, so that
    replays start from the inputs the original run started from."""
    backend = backend_for(value)
    if backend is not None:
        return backend.copy(value)
    if depth < MAX_DEPTH and type(value) in (list, tuple):
        return type(value)(snapshot(v, depth + 1) for v in value)
    if depth < MAX_DEPTH and type(value) is dict:
        return {k: snapshot(v, depth + 1) for k, v in value.items()}
    return value


def _is_namedtuple(value: object) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def input_devices(io: CellIO, namespace: Mapping[str, Any]) -> list[str]:
    """Devices of the array inputs of a cell in ``namespace`` (the original run's)."""
    found: list[str] = []

    def visit(value: Any, depth: int) -> None:
        device = device_of(value)
        if device is not None:
            if device not in found:
                found.append(device)
        elif depth < MAX_DEPTH and isinstance(value, list | tuple | dict):
            items = value.values() if isinstance(value, dict) else value
            for item in list(items)[:MAX_ITEMS]:
                visit(item, depth + 1)

    for name in io.inputs:
        if name in namespace:
            visit(namespace[name], 0)
    return found
