"""Moving a worker's copy of the inputs onto the replay's backend and device.

The worker's objects are its own (they arrived by value), so arrays are replaced where
they sit: inside lists, tuples, dicts, dataclasses (frozen too), the attributes and
``__slots__`` of the person's own objects, as deep as they go, each object once (shared
objects stay shared, cycles end). Objects of libraries (a pandas frame, a model of some
framework) keep their arrays as they are: they are that library's business. An array
already of the target library on the target device stays as it is, so a replay on the
original backend keeps its autograd state (torch's ``requires_grad``, ``.grad`` and
parameters); moving an array that records gradients to another device of its library
keeps both, as its adapter says (`Backend.with_autograd`).
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

from porter_ext.backends import Backend, ConversionError, backend_for, convert_to, device_of
from porter_ext.replay.draws import moved_draws, moved_generator
from porter_ext.replay.inputs import _rebind, conversion_label, is_array_input, is_array_namespace

#: how deep nested containers and objects are searched for arrays
MAX_DEPTH = 64
#: how deep into lists, tuples and dicts, and over how many values, the person's
#: functions' globals are looked for (`home_globals`)
_GLOBALS_DEPTH = 4
_GLOBALS_SEARCH = 10_000
_LEAVES = (
    int,
    float,
    complex,
    str,
    bytes,
    bool,
    type(None),
    range,
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)


class Placer:
    """Moves the arrays of one replay's namespace to ``backend`` on ``device``."""

    def __init__(
        self,
        backend: Backend,
        device: str | None,
        home_module: str = "__main__",
        moves_draws: bool = False,
    ):
        self.backend, self.device, self.moves_draws = backend, device, moves_draws
        self.target_device = device or backend.default_device()
        self.home = home_module
        self.memo: dict[int, Any] = {}
        self.conversions: dict[str, str] = {}
        self.devices: list[str] = []
        self.rebound: list[str] = []
        self.notes: dict[str, list[str]] = {}

    def namespace(self, ns: dict[str, Any]) -> None:
        """Move every input in ``ns`` (in place) and rebind array API namespaces."""
        for name in list(ns):
            if name.startswith("__") and name.endswith("__"):
                continue
            value = ns[name]
            if is_array_namespace(value):
                rebound = _rebind(value, self.backend)
                ns[name] = moved_draws(value, rebound, self.backend, self.device, self.moves_draws)
                self.rebound.append(name)
            elif isinstance(value, types.ModuleType):
                ns[name] = moved_draws(value, value, self.backend, self.device, self.moves_draws)
            else:
                moved = self.move(value, name, 0)
                ns[name] = moved_generator(moved, self.backend, self.device)

    def move(self, value: Any, path: str, depth: int) -> Any:
        key = id(value)
        if key in self.memo:
            return self.memo[key]
        if is_array_input(value):
            moved = self.array(value, path)
            self.memo[key] = moved
            return moved
        if depth >= MAX_DEPTH or isinstance(value, _LEAVES):
            return value
        kind = type(value)
        # the person's own subclasses too (a frozendict), filled through dict's and list's
        # own methods: theirs may refuse
        if kind is list or (isinstance(value, list) and self._holds_person_data(value)):
            self.memo[key] = value
            for i, item in enumerate(value):
                list.__setitem__(value, i, self.move(item, f"{path}[{i}]", depth + 1))
            if kind is not list:
                self._attributes(value, path, depth)
            return value
        if kind is dict or (isinstance(value, dict) and self._holds_person_data(value)):
            self.memo[key] = value
            for k, item in list(value.items()):
                dict.__setitem__(value, k, self.move(item, f"{path}[{k!r}]", depth + 1))
            if kind is not dict:
                self._attributes(value, path, depth)
            return value
        if isinstance(value, tuple) and (kind is tuple or hasattr(kind, "_fields")):
            items = [self.move(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
            if all(a is b for a, b in zip(items, value, strict=True)):
                moved = value
            else:
                moved = kind(*items) if kind is not tuple else tuple(items)
            self.memo[key] = moved
            return moved
        if self._holds_person_data(value):
            self.memo[key] = value
            self._attributes(value, path, depth)
        return value

    def _holds_person_data(self, value: Any) -> bool:
        kind = type(value)
        return (
            dataclasses.is_dataclass(value)
            or kind is types.SimpleNamespace
            or getattr(kind, "__module__", None) == self.home
        )

    def _attributes(self, value: Any, path: str, depth: int) -> None:
        names = list(getattr(value, "__dict__", {}))
        for klass in type(value).__mro__:
            slots = klass.__dict__.get("__slots__", ())
            names += [slots] if isinstance(slots, str) else list(slots)
        for name in dict.fromkeys(names):
            if name in ("__dict__", "__weakref__"):
                continue
            try:
                item = object.__getattribute__(value, name)
            except AttributeError:
                continue
            moved = self.move(item, f"{path}.{name}", depth + 1)
            if moved is not item:
                object.__setattr__(value, name, moved)

    def array(self, x: Any, path: str) -> Any:
        source = backend_for(x)
        if source is self.backend and device_of(x) == self.target_device:
            self._device(x)
            return x
        try:
            conv = convert_to(x, self.backend, self.device)
        except ConversionError as error:
            raise ConversionError(f"input {path!r}: {error}") from None
        value = conv.value
        if source is self.backend and source.tracks_gradient(x):  # another device of it
            grad = source.gradient(x)
            if grad is not None:
                grad = convert_to(grad, self.backend, self.device).value
            graph = source.autograd_node(x)
            value = source.with_autograd(value, tracks=True, gradient=grad, graph=graph)
        self.conversions[path] = conversion_label(conv)
        for text in conv.notes:
            self.notes.setdefault(text, []).append(path)
        self._device(value)
        return value

    def summary(self) -> list[str]:
        """The conversions' notes, each with the inputs it concerns (as the report shows)."""
        return [f"{text} ({', '.join(paths)})" for text, paths in self.notes.items()]

    def _device(self, x: Any) -> None:
        device = device_of(x)
        if device is not None and device not in self.devices:
            self.devices.append(device)


def home_globals(values: dict[str, Any], home: str = "__main__") -> dict[str, Any] | None:
    """The globals that the person's functions (arrived by value) share, if any: the
    replay runs in that very dict, so that those functions read the replay's names (the
    recorder's hooks among them). A function, an object of a class of the person's, or
    one in a list, tuple or dict (``layers = [Flatten(), ...]``: its class's methods read
    the hooks from that dict too)."""
    todo = [(value, 0) for value in values.values()]
    seen: set[int] = set()
    while todo and len(seen) < _GLOBALS_SEARCH:
        value, depth = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        for candidate in (value, type(value)):
            if isinstance(candidate, types.FunctionType) and candidate.__module__ == home:
                return candidate.__globals__
            if isinstance(candidate, type) and candidate.__module__ == home:
                for attr in vars(candidate).values():
                    func = getattr(attr, "__func__", attr)
                    if isinstance(func, types.FunctionType) and func.__module__ == home:
                        return func.__globals__
        if depth < _GLOBALS_DEPTH and type(value) in (list, tuple, dict):
            items = value.values() if isinstance(value, dict) else value
            todo.extend((item, depth + 1) for item in items)
    return None
