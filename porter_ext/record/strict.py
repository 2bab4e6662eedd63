"""Namespaces that hold code to the standard while it runs on the real backend.

``strict_namespace(xp)`` wraps any array namespace: standard names behave exactly as on
``xp``; a name or a usage outside the standard raises `NonStandardError` naming the call
and what to write instead; ``xp.backend.NAME`` reaches the real library on purpose, and
calls through it are recorded as ``acknowledged``. The lenient view (``strict=False``)
only adds ``.backend``, so that the escape hatch reads the same in recorded cells.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from porter_ext.backends import namespace_owner
from porter_ext.spec.standard import DEFAULT_VERSION, VERSIONS, FunctionSpec, standard

if TYPE_CHECKING:
    from porter_ext.spec.replacement import Replacement


class NonStandardError(Exception):
    """A name or a usage outside the array API standard, met under strict checking."""

    def __init__(self, message: str, *, name: str = "", suggestion: str | None = None):
        super().__init__(message)
        self.name = name
        self.suggestion = suggestion
        self.line: int | None = None

    def at_line(self, line: int) -> NonStandardError:
        if self.line is None:
            self.line = line
            self.args = (f"line {line}: {self.args[0]}",)
        return self


class NonStandardAttributeError(NonStandardError, AttributeError):
    """Raised on access to a non-callable name outside the standard (``hasattr`` sees it)."""


def _suggest(library_name: str, name: str) -> Replacement | None:
    """The replacement table's unconditional entry for ``name``, or None."""
    from porter_ext.spec.replacements import find

    for lib in (library_name, "*"):
        for entry in find(lib, "function", name):
            if entry.when is None:
                return entry
    return None


class StandardFunction:
    """A standard function of a wrapped namespace: checks each call's usage, then calls."""

    __slots__ = ("__wrapped__", "spec", "qualname", "_ok")

    def __init__(self, fn: Any, spec: FunctionSpec, qualname: str):
        self.__wrapped__ = fn
        self.spec = spec
        self.qualname = qualname
        self._ok: set[tuple[int, tuple[str, ...]]] = set()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = (len(args), tuple(kwargs))
        if key not in self._ok:
            reason = self.spec.check_call(*key)
            if reason is not None:
                raise NonStandardError(
                    f"{self.qualname}: {reason}. The standard signature is {self.spec.render()}.",
                    name=self.qualname,
                    suggestion=f"xp.{self.spec.render()}",
                )
            self._ok.add(key)
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<standard function {self.qualname} of {self.__wrapped__!r}>"

    @property
    def __name__(self) -> str:
        return self.spec.name.rpartition(".")[2]

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return getattr(self.__wrapped__, "__doc__", None)


class RejectedFunction:
    """A callable outside the standard, reached through a strict namespace: calling it
    raises, naming what to write instead with the call's own arguments filled in."""

    __slots__ = ("__wrapped__", "qualname", "entry")

    def __init__(self, fn: Any, qualname: str, entry: Replacement | None):
        self.__wrapped__ = fn
        self.qualname = qualname
        self.entry = entry

    @property
    def suggestion(self) -> str | None:
        """The suggestion as the table writes it (placeholders unfilled)."""
        return self.entry.suggestion if self.entry is not None else None

    def error(self, args: tuple = (), kwargs: dict | None = None) -> NonStandardError:
        from porter_ext.spec.replacements import render_suggestion

        suggestion = (
            render_suggestion(self.entry, args, kwargs or {}) if self.entry is not None else None
        )
        base = self.qualname.rpartition(".")[2]
        hint = f"write {suggestion}" if suggestion else "it has no standard equivalent"
        return NonStandardError(
            f"{self.qualname} is not in the array API standard: {hint}; or call "
            f"xp.backend.{base}(...) to mark the deviation as deliberate.",
            name=self.qualname,
            suggestion=suggestion,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error(args, kwargs)

    def __repr__(self) -> str:
        return f"<non-standard {self.qualname}>"


class AcknowledgedFunction:
    """A call through the ``backend`` escape hatch: runs the real function, reported as
    ``acknowledged``."""

    __slots__ = ("__wrapped__", "qualname")

    def __init__(self, fn: Any, qualname: str):
        self.__wrapped__ = fn
        self.qualname = qualname

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<acknowledged {self.qualname}>"


class BackendNamespace:
    """``xp.backend``: the real namespace, each callable marked as a deliberate deviation."""

    def __init__(self, real: Any, label: str):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if callable(value) and not isinstance(value, type):
            value = AcknowledgedFunction(value, f"{self._label}.{name}")
        object.__setattr__(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"<porter backend of {self._real!r}>"


class NamespaceView:
    """An array namespace seen through porter: strict or lenient (see the module doc)."""

    def __init__(self, real: Any, *, strict: bool, version: str, prefix: str = ""):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_strict", strict)
        object.__setattr__(self, "_version", version)
        object.__setattr__(self, "_prefix", prefix)
        label = getattr(real, "__name__", type(real).__name__)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "backend", BackendNamespace(real, label))

    @property
    def __wrapped__(self) -> Any:
        return self._real

    def __getattr__(self, name: str) -> Any:
        real = self._real
        if name.startswith("__") or not self._strict:
            value = getattr(real, name)
            if not name.startswith("__"):
                object.__setattr__(self, name, value)
            return value
        std = standard(self._version)
        full = self._prefix + name
        if not self._prefix and name in std.extensions:
            value: Any = NamespaceView(
                getattr(real, name), strict=True, version=self._version, prefix=f"{name}."
            )
        elif full in std.functions:
            value = StandardFunction(getattr(real, name), std.functions[full], f"xp.{full}")
        elif full in std.constants or full in std.dtypes:
            value = getattr(real, name)
        else:
            fn = getattr(real, name)  # a name the backend lacks raises its own AttributeError
            entry = _suggest(_library_label(real), full)
            if not callable(fn) or isinstance(fn, type):
                suggestion = entry.suggestion if entry is not None else None
                raise NonStandardAttributeError(
                    f"xp.{full} is not in the array API standard ({self._version})"
                    + (f": write {suggestion}" if suggestion else ""),
                    name=f"xp.{full}",
                    suggestion=suggestion,
                )
            value = RejectedFunction(fn, f"xp.{full}", entry)
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)

    def __dir__(self) -> list[str]:
        if not self._strict:
            return [*dir(self._real), "backend"]
        std = standard(self._version)
        names = {n.rpartition(".")[2] for n in std.functions if n.startswith(self._prefix)}
        if not self._prefix:
            names = {n for n in std.functions if "." not in n} | set(std.extensions)
            names |= std.constants | std.dtypes
        return sorted(names | {"backend"})

    def __repr__(self) -> str:
        kind = "strict" if self._strict else "recorded"
        return f"<{kind} array namespace {self._label}>"


@functools.cache
def _library_label(real: Any) -> str:
    """The spec name of the library a namespace module belongs to (``array_api_compat.torch``
    is torch's), or the module's own name for anything else."""
    name = getattr(real, "__name__", "")
    backend = namespace_owner(name)
    return backend.name if backend is not None else name


def unwrap_namespace(xp: Any) -> Any:
    while isinstance(xp, NamespaceView):
        xp = xp._real
    return xp


def claimed_version(xp: Any) -> str:
    """The standard version a namespace says it implements (``__array_api_version__``),
    when porter knows that version; else the default (the newest)."""
    claimed = getattr(unwrap_namespace(xp), "__array_api_version__", None)
    return claimed if claimed in VERSIONS else DEFAULT_VERSION


def strict_namespace(xp: Any, *, version: str | None = None) -> NamespaceView:
    """Wrap the array namespace ``xp`` so that anything outside the standard raises
    `NonStandardError`, checked against ``version`` (default: the version ``xp`` claims).
    Idempotent: a wrapped namespace is returned as it is."""
    if isinstance(xp, NamespaceView) and xp._strict and version in (None, xp._version):
        return xp
    real = unwrap_namespace(xp)
    return NamespaceView(real, strict=True, version=version or claimed_version(real))


def recorded_namespace(xp: Any, *, strict: bool, version: str = DEFAULT_VERSION) -> Any:
    """The view a recorded cell gets of a namespace it obtained."""
    if isinstance(xp, NamespaceView) and (xp._strict or not strict):
        return xp
    return NamespaceView(unwrap_namespace(xp), strict=strict, version=version)
