"""What every library adapter offers, and the records it hands back.

An adapter is the one home of its library: how to recognise its arrays and namespaces,
its spec name, its device reader, the namespaces the recorder resolves callees in, its
copy and DLPack rules, its default device and its availability. It never imports its
library at module level: it looks in ``sys.modules`` to recognise arrays (an array of a
library that was never imported cannot exist) and imports the library only when asked
to do something with it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from porter_ext.model.environment import BackendEntry

if TYPE_CHECKING:
    import numpy


class BackendUnavailable(RuntimeError):
    """A library (or one of its devices) is not there; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DeviceUnavailable(BackendUnavailable):
    """The library is there but the requested device is not."""


class ConversionError(ValueError):
    """An array cannot be moved to the requested backend (a traced value, a dtype it lacks)."""


#: one line of ``porter backends`` is the report's ``environment.backends`` entry: one type
BackendInfo = BackendEntry


@dataclass(frozen=True)
class Conversion:
    """An array moved to another backend, and what that cost.

    ``shares_memory`` tells the caller that writing to ``value`` may change the source,
    so it must copy before a replay that could mutate its inputs.
    """

    value: object
    mode: str  # "zero_copy" | "copy"
    reason: str | None
    shares_memory: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Namespace:
    """A module the recorder indexes callees in: ``prefix`` goes before each name relative
    to the library's array namespace (``"linalg."``), ``qualname`` before the name shown
    to people (None: the library's ``qualname_prefix``)."""

    module: str
    prefix: str = ""
    qualname: str | None = None


TRACED = "traced"


@dataclass
class ReplayScope:
    """What a backend's ``replay_context`` yields: notes for the report, and how to
    finish an output (compute a lazy one) while the context is still open."""

    notes: list[str] = field(default_factory=list)

    def finish(self, value: Any) -> Any:
        return value


def loaded(module: str) -> ModuleType | None:
    """The module if the person's process already imported it, without importing it."""
    return sys.modules.get(module)


@functools.cache
def _import_failure(module: str) -> str | None:
    """None when ``module`` imports; otherwise the error text (failures are remembered)."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        if error.name is not None and module.startswith(error.name):
            return "not installed"
        return f"failed to import: {type(error).__name__}: {error}"
    except Exception as error:  # a broken install must not break porter
        return f"failed to import: {type(error).__name__}: {error}"
    return None


class Backend(ABC):
    """One array library: availability, namespace, devices, and moving arrays in and out.

    Instances are cheap and hold no state; every method imports the library lazily.
    Device strings are spelled as the library spells them (the spec spelling).
    """

    #: spec name ("numpy", "torch", "jax", "cupy", "strict", "dask"): the one spelling
    name: str
    #: import name of the library
    module: str
    #: distribution name, for the version
    distribution: str
    #: the porter-ext extra that installs it
    extra: str
    #: the library's name in prose ("PyTorch", "array-api-strict")
    title: str
    #: other spellings people type for it in a spec (its import name is one already)
    aliases: tuple[str, ...] = ()
    #: top-level modules whose functions and types belong to this library
    roots: tuple[str, ...] = ()
    #: how the library's functions are qualified in reports ("jax.numpy" for JAX)
    qualname_prefix: str = ""
    #: the type name of its arrays in reports ("Tensor" in "Tensor.sum")
    array_type_name: str = "ndarray"
    #: the namespaces the recorder indexes, in order of precedence
    namespaces: tuple[Namespace, ...] = ()
    #: module names that are array API namespaces of this library (rebound in a replay)
    api_modules: frozenset[str] = frozenset()
    #: whether its arrays can be written in place (a shared buffer then needs a copy)
    mutable: bool = True
    #: names under the library's top level that build functions rather than compute
    #: arrays (``jax.jit``): not array calls
    not_array_calls: frozenset[str] = frozenset()
    #: names under the library's top level that transform functions (``jax.jit``):
    #: recorded as kind ``transformation``
    transformations: frozenset[str] = frozenset()
    #: whether its arrays take slices with a negative step (``x[::-1]``)
    negative_step_slices: bool = True
    #: the device of every array of this library when it has only one (NumPy's ``cpu``):
    #: the recorder's hot path reads it instead of calling `device_of`
    fixed_device: str | None = None
    #: ``(attribute, device)``: an attribute of an array that is true exactly when the
    #: array is on that device (torch's ``is_cpu``), read on the recorder's hot path
    #: before `device_of` (a C attribute read, where `device_of` is a Python call)
    quick_device: tuple[str, str] | None = None
    #: prefixes of the names (relative to the array namespace) of the library's own
    #: device-agnostic runtime API (torch's ``accelerator.``): recorded, and not judged
    #: by the standard (it is how portable code reaches a device in that library)
    runtime_api: tuple[str, ...] = ()
    #: the library's own names of standard dtypes that the standard spells otherwise
    #: (torch's ``torch.double`` is ``float64``): what a dtype rewrite writes instead
    dtype_aliases: dict[str, str] = {}  # noqa: RUF012 (read only)
    #: whether the library reuses an operand's buffer when the operand is a temporary
    #: (NumPy's temporary elision: it needs the operand referenced once)
    elides_temporaries: bool = False
    #: whether the library only ever computes on the host: its replay workers see no GPU
    host_only: bool = False
    #: the names (the last part) of the library's calls that move data to another device
    #: or to Python on purpose (torch's ``x.cpu()``, JAX's ``device_put``): a result
    #: elsewhere is what they are for, not an implicit transfer
    moving_calls: frozenset[str] = frozenset()
    #: the names of the library's own calls, beyond the standard's, that make a new array
    #: (torch's ``tensor``, NumPy's ``random.randn``: the last part)
    creation_calls: frozenset[str] = frozenset()
    #: those of `creation_calls` that take an array and should keep its device
    creation_from_array: frozenset[str] = frozenset()
    #: ``(rtol, atol)`` of the library's own closeness test by default, per real floating
    #: dtype (``float16``, ``bfloat16``, ``float32``, ``float64``; a complex dtype takes
    #: its real part's): porter offers it as a tolerance policy named after the library
    testing_tolerances: dict[str, tuple[float, float]] = {}  # noqa: RUF012 (read only)

    def lib(self) -> ModuleType:
        """The imported library; BackendUnavailable with the reason when it is not there."""
        module = sys.modules.get(self.module)
        if module is not None:
            return module
        ok, reason = self.available()
        if not ok:
            raise BackendUnavailable(reason or f"{self.name} is unavailable")
        return importlib.import_module(self.module)

    def available(self) -> tuple[bool, str | None]:
        failure = _import_failure(self.module)
        if failure is None:
            return True, None
        if failure == "not installed":
            return False, f"{self.module} is not installed (pip install porter-ext[{self.extra}])"
        return False, f"{self.module} {failure}"

    def version(self) -> str | None:
        import importlib.metadata  # 0.1 s to import: only when asked

        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            module = loaded(self.module)
            return getattr(module, "__version__", None) if module else None

    def default_device(self) -> str:
        devices = self.devices()
        if not devices:
            raise BackendUnavailable(self.available()[1] or f"{self.name} sees no device")
        return devices[0]

    @abstractmethod
    def devices(self) -> list[str]:
        """Device strings in spec spelling, the default first; [] when unavailable."""

    @abstractmethod
    def namespace(self) -> Any:
        """The array API namespace for this library."""

    @abstractmethod
    def array_types(self) -> tuple[type, ...]:
        """The library's array types (traced values included); () while it is not imported."""

    def scalar_types(self) -> tuple[type, ...]:
        """Array types that behave as numbers (NumPy scalars): kept as they are in a replay."""
        return ()

    def owns(self, x: object) -> bool:
        """Whether ``x`` is an array of this library (never imports the library)."""
        types = self.array_types()
        return bool(types) and isinstance(x, types)

    @abstractmethod
    def device_of(self, x: Any) -> str:
        """Where ``x`` lives, in spec spelling; ``"traced"`` for a traced value.

        On the recorder's hot path: keep it a few attribute reads.
        """

    def is_namespace(self, module_name: str) -> bool:
        """Whether the module named ``module_name`` is an array API namespace of this library."""
        return module_name in self.api_modules

    def misspelled_device(self, device: str) -> str | None:
        """Why ``device`` names no device of this library on any machine (its spelling
        breaks the library's grammar: a spec to refuse as a usage error); None when it
        may name one, here or elsewhere (whether it is here: `resolve_device`)."""
        return None

    def place_error(self, where: str, timeout: float) -> str | None:
        """Why the place a spec's WHERE names for this library (a Dask scheduler) does not
        answer within ``timeout`` seconds; None when it answers. Asked only of a WHERE
        that names no kernel (kernels elsewhere are the workers' business): a library with
        no places of its own has none there, and a replay run here instead would be
        reported as run where the person asked for another place."""
        return (
            f"{where} is neither a kernel's connection file (a .json file a running kernel "
            f"wrote) nor a Jupyter gateway URL (http:// or https://), and {self.name} has "
            "no places of its own: correct the path or URL after @"
        )

    @abstractmethod
    def resolve_device(self, device: str | None) -> Any:
        """The library's device object for a spec device (None: the default).

        Raises DeviceUnavailable with the reason when the device is not there.
        """

    @abstractmethod
    def to_host(self, x: Any) -> numpy.ndarray:
        """A NumPy view of ``x`` for comparison, zero-copy where possible.

        bfloat16 becomes float32; the result may be read-only and may share memory.
        """

    def host_copy(self, x: Any) -> numpy.ndarray:
        """A writable NumPy array that shares nothing with ``x``."""
        import numpy as np

        return np.array(self.to_host(x), copy=True)

    @abstractmethod
    def copy(self, x: Any) -> Any:
        """A copy of ``x`` on its own device, sharing no buffer with it."""

    def unavailable_kinds(self) -> list[tuple[str, str]]:
        """(spec, reason) for each device kind this library could have but does not."""
        return []

    # -- moving arrays (see convert.py for the order of work) --------------------------
    def export_ready(self, x: Any, trail: Any) -> Any:
        """``x`` ready to leave this library: detached, resolved, concrete. Raises
        ConversionError for values that carry no data."""
        return x

    def dlpack_ready(self, x: Any, trail: Any) -> Any:
        """``x`` in a state whose ``__dlpack_device__`` tells the truth (a copy, noted in
        ``trail``, where the library must move it first)."""
        return x

    def data_pointer(self, x: Any) -> int | None:
        """Address of the first element of a host array (JAX's alignment rule), or None."""
        return None

    @abstractmethod
    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        """``x`` (an array of ``source``, export-ready) as an array of this library on
        ``device`` (a resolved device object), zero-copy where the devices allow."""

    def narrows(self, dtype: str) -> str | None:
        """What this library turns ``dtype`` into when it cannot hold it, or None."""
        return None

    def worker_environment(self, device: str | None, *, x64: bool = False) -> dict[str, str]:
        """Variables a fresh process needs, set before this library is imported, to have
        ``device`` (and float64 when ``x64``) where this process may not: what a replay
        worker for such a spec starts with."""
        return {}

    #: what `process_state` gives right after the library is imported: a process that has
    #: not imported it need not import it to take that state
    initial_process_state: dict[str, Any] | None = None

    def process_state(self) -> dict[str, Any] | None:
        """The library's settings of this process that change what a cell computes (error
        states, default dtype, determinism), picklable; None when there are none or the
        library is not imported (it is never imported for this)."""
        return None

    def set_process_state(self, state: dict[str, Any]) -> None:  # noqa: B027 (none here)
        """Make this process's settings ``state`` (as `process_state` gave it)."""

    def random_state(self) -> Any:
        """The library's global random state in this process, picklable (a replay starts
        from it, so that it draws the numbers the original drew); None when it has none
        or is not imported (it is never imported for this)."""
        return None

    def set_random_state(self, state: Any) -> None:  # noqa: B027 (none here)
        """Make this process's global random state ``state`` (as `random_state` gave it)."""

    def generator_reduction(self, obj: object) -> tuple[Any, tuple] | None:
        """How a random generator of this library that pickles only through its state
        travels to another process (a ``__reduce__`` pair); None for anything else."""
        return None

    # -- device objects (recognised by their attributes: the library is never imported) -
    def is_device(self, obj: object) -> bool:
        """Whether ``obj`` (neither an array, a string nor a number) is a device object of
        this library."""
        return False

    def device_type(self, obj: object) -> str | None:
        """The kind of device a device object of this library names (``cuda`` for
        ``torch.device("cuda:1")``); None when ``obj`` names none."""
        return None

    # -- compilers (recognised by their attributes and types: the library is never imported)
    def compiled(self, f: object) -> tuple[str, str, str] | None:
        """Where this library's compiler made the callable ``f`` (a function or module it
        runs from its own compiled code, which Python-level recording cannot enter): how
        its call is named (``torch.compile``), the compiler as people know it
        (``TorchScript``) and what it compiled (``g``); None for anything else."""
        return None

    # -- autograd (libraries without it keep the defaults) -------------------------------
    def autograd_node(self, x: Any) -> str | None:
        """The name of the operation that made ``x`` in an autograd graph (torch's
        ``grad_fn``); None for a leaf, or a library without autograd."""
        return None

    def tracks_gradient(self, x: Any) -> bool:
        """Whether autograd records operations on ``x`` (torch's ``requires_grad``)."""
        return False

    def gradient(self, x: Any) -> Any:
        """The gradient accumulated on ``x`` (torch's ``.grad``), or None."""
        return None

    def with_autograd(
        self,
        x: Any,
        *,
        tracks: bool,
        gradient: Any = None,
        kind: type | None = None,
        graph: str | None = None,
    ) -> Any:
        """``x`` (an array of this library, just rebuilt or moved) with the autograd state
        of the array it stands for: recording gradients when ``tracks``, with
        ``gradient`` as its gradient, and of the array class ``kind`` (a parameter class)
        where given. ``graph``: the array was made by that operation of a graph, which
        cannot travel; ``x`` stands for it as an array made by an operation too (not a
        leaf, so that in-place operations behave as on the original), and a backward
        pass that reaches it is noted (`cut_graphs_reached`)."""
        return x

    def cut_graphs_reached(self) -> list[str]:
        """The operations (``graph`` of `with_autograd`) whose stand-ins a backward pass
        reached since the last call: the gradients it would have given what made them
        could not be computed. Forgotten once read."""
        return []

    def array_subclass(self, x: Any) -> type | None:
        """The type of ``x`` when it is a subclass of the library's plain array type
        (torch's ``nn.Parameter``), which a receiver rebuilds; None otherwise."""
        root = type(x).__module__.partition(".")[0]
        for klass in type(x).__mro__[1:]:
            if (
                klass.__module__.partition(".")[0] == root
                and klass.__name__ == self.array_type_name
            ):
                return type(x)
        return None

    def own_semantics(self, x: Any) -> str | None:
        """The name of ``x``'s class when it is one of the library's array subclasses
        whose operations mean something the plain array's do not (NumPy's masked arrays,
        matrices, record arrays): a rewrite through ``xp`` would make it a plain array.
        None otherwise."""
        return None

    @contextlib.contextmanager
    def replay_context(self, where: str | None) -> Iterator[ReplayScope]:
        """Entered around a replay's run on this backend (``where``: the spec's WHERE);
        the scope collects notes for the report and finishes the outputs before the
        context closes (a lazy library computes them there, once)."""
        yield ReplayScope()

    def __repr__(self) -> str:
        return f"<porter backend {self.name}>"


_DTYPE_NAMES: dict[tuple[type, Any], str] = {}


#: ``TYPE`` or ``TYPE:INDEX``, the index a whole number without leading zeros
_INDEXED_DEVICE = re.compile(r"([A-Za-z_]+)(?::(?:0|[1-9][0-9]*))?")


def indexed_device_error(
    library: str, device: str, example: str, kinds: tuple[str, ...] = ()
) -> str | None:
    """The reason ``device`` is not ``TYPE[:INDEX]`` (of one of ``kinds``, where given),
    as libraries that number their devices spell them; None when it is."""
    match = _INDEXED_DEVICE.fullmatch(device)
    if match is not None and (not kinds or match.group(1).lower() in kinds):
        return None
    forms = " or ".join(f"{kind}[:INDEX]" for kind in kinds or ("TYPE",))
    return (
        f"{library}:{device} cannot name a {library} device: {library} spells devices "
        f"{forms}, the index a whole number (e.g. {library}:{example})"
    )


def dtype_name(x: Any) -> str:
    """The dtype of any supported array as a plain name: ``float32``, ``bfloat16``.

    Works for NumPy, JAX, CuPy (NumPy dtypes), torch (``torch.float32``) and
    array-api-strict (``array_api_strict.float32``).
    """
    dtype = x.dtype
    # keyed by type too: a strict dtype hashes like its NumPy twin but warns on ==
    key = (type(dtype), dtype)
    try:
        cached = _DTYPE_NAMES.get(key)
    except TypeError:  # an unhashable dtype
        return str(dtype).rpartition(".")[2]
    if cached is not None:
        return cached
    # str() of a NumPy dtype costs microseconds: remember it
    name = getattr(dtype, "name", None)  # NumPy: ">f8" is "float64"
    if not isinstance(name, str):
        name = str(dtype).rpartition(".")[2]
    _DTYPE_NAMES[key] = name
    return name
