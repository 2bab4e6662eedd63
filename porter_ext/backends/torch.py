"""PyTorch: ``cpu`` plus accelerators found through the device-agnostic ``torch.accelerator``.

``meta`` tensors carry no data, so ``meta`` is not a replay device. porter never calls
``torch.cuda.*``: CUDA, ROCm (spelled ``cuda``), XPU and MPS all come through
``torch.accelerator``.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any

from .base import (
    Backend,
    ConversionError,
    DeviceUnavailable,
    Namespace,
    indexed_device_error,
    loaded,
)
from .dlpack import REFUSED, why

if TYPE_CHECKING:
    import numpy

NO_ACCELERATOR = "no accelerator (torch.accelerator.is_available() is False)"
#: torch.device → its spec spelling (reading a tensor's device is on the hot path)
_SPELLED: dict[Any, str] = {}

_TORCH_NAME = "torch"
_COMPILE = "torch.compile"
_SCRIPT = "torch.jit"
#: the attribute torch.compile sets on the function it returns: the callable it compiles
_DYNAMO_TARGET = "_torchdynamo_orig_callable"
#: what ``torch._dynamo.disable`` (which torch applies to some of its own functions) sets
#: on the same kind of wrapper: its callable runs as it is, never compiled
_DYNAMO_DISABLED = "_torchdynamo_disable"
#: TorchScript's callables (``torch.jit.script``/``trace`` of a function or a module)
_SCRIPT_TYPES = frozenset(
    {"ScriptFunction", "ScriptMethod", "RecursiveScriptModule", "TopLevelTracedModule"}
)
_MODULE_CLASS = ("torch.nn.modules.module", "Module")


def _named(target: object) -> str:
    name = getattr(target, "__qualname__", None)
    return name if isinstance(name, str) else type(target).__name__


class TorchBackend(Backend):
    name = "torch"
    title = "PyTorch"
    module = "torch"
    quick_device = ("is_cpu", "cpu")
    runtime_api = ("accelerator.",)
    distribution = "torch"
    extra = "torch"
    aliases = ("pytorch",)
    roots = ("torch",)
    qualname_prefix = "torch"
    array_type_name = "Tensor"
    negative_step_slices = False  # x[::-1] raises ValueError: torch.flip copies instead
    namespaces = (
        Namespace("torch"),
        Namespace("torch.linalg", "linalg."),
        Namespace("torch.fft", "fft."),
        Namespace("torch.special", "special."),
        Namespace("torch.cuda", "cuda."),
        Namespace("torch.accelerator", "accelerator."),
        Namespace("torch.nn.functional", "nn.functional."),
        Namespace("array_api_compat.torch"),
        Namespace("array_api_compat.torch.linalg", "linalg."),
        Namespace("array_api_compat.torch.fft", "fft."),
    )
    api_modules = frozenset({"array_api_compat.torch"})
    moving_calls = frozenset({"to", "cpu", "cuda", "numpy", "item", "tolist"})
    creation_calls = frozenset(
        {"tensor", "as_tensor", "logspace", "rand", "randn", "randint", "normal"}
    )
    creation_from_array = frozenset({"tensor", "as_tensor"})
    # torch.testing.assert_close by default (torch/testing/_comparison.py); complex dtypes
    # take the tolerance of their real parts there too
    testing_tolerances = {  # noqa: RUF012 (read only)
        "float16": (1e-3, 1e-5),
        "bfloat16": (1.6e-2, 1e-5),
        "float32": (1.3e-6, 1e-5),
        "float64": (1e-7, 1e-7),
    }

    def __init__(self) -> None:
        #: operations whose stand-ins a backward pass reached (`cut_graphs_reached`)
        self._reached: list[str] = []

    def _accelerator(self) -> tuple[str, int] | None:
        """(device type, count) of the accelerator this torch sees, or None."""
        torch = self.lib()
        if not torch.accelerator.is_available():
            return None
        kind = torch.accelerator.current_accelerator()
        count = torch.accelerator.device_count()
        return (kind.type, count) if kind is not None and count > 0 else None

    initial_process_state = {"default_dtype": "float32", "deterministic": False, "warn_only": False}
    dtype_aliases = {
        "float": "float32",
        "double": "float64",
        "long": "int64",
        "int": "int32",
        "short": "int16",
        "cfloat": "complex64",
        "cdouble": "complex128",
    }

    def process_state(self) -> dict[str, Any] | None:
        torch = loaded("torch")
        if torch is None:
            return None
        return {
            "default_dtype": str(torch.get_default_dtype()).removeprefix("torch."),
            "deterministic": torch.are_deterministic_algorithms_enabled(),
            "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
        }

    def set_process_state(self, state: dict[str, Any]) -> None:
        torch = self.lib()
        torch.set_default_dtype(getattr(torch, state["default_dtype"]))
        torch.use_deterministic_algorithms(state["deterministic"], warn_only=state["warn_only"])

    # -- random states: the global CPU generator, and the accelerator's through the
    # device-agnostic runtime
    def random_state(self) -> Any:
        torch = loaded("torch")
        if torch is None:
            return None
        state: dict[str, Any] = {"cpu": self._raw(torch.get_rng_state())}
        device_module = _accelerator_module(torch)
        if device_module is not None:
            state["accelerator"] = [self._raw(s) for s in device_module.get_rng_state_all()]
        return state

    def set_random_state(self, state: Any) -> None:
        torch = self.lib()
        torch.set_rng_state(_state_tensor(torch, state["cpu"]))
        device_module = _accelerator_module(torch)
        if device_module is not None and "accelerator" in state:
            device_module.set_rng_state_all([_state_tensor(torch, r) for r in state["accelerator"]])

    def _raw(self, state: Any) -> bytes:
        """A generator state (a uint8 tensor) as bytes."""
        return self.host_copy(state).tobytes()

    def generator_reduction(self, obj: object) -> tuple[Any, tuple] | None:
        kind = type(obj)
        if not (
            kind.__name__ == "Generator"
            and hasattr(obj, "get_state")
            and hasattr(obj, "set_state")
            and hasattr(obj, "manual_seed")
        ):
            return None
        raw = self._raw(obj.get_state())  # type: ignore[attr-defined]
        return restore_generator, (kind, str(obj.device), raw)  # type: ignore[attr-defined]

    # -- device objects and autograd
    def is_device(self, obj: object) -> bool:
        return hasattr(obj, "type") and hasattr(obj, "index")  # torch.device

    def device_type(self, obj: object) -> str | None:
        kind = getattr(obj, "type", None)  # torch.device("cuda:1").type is "cuda"
        return kind if isinstance(kind, str) else None

    def compiled(self, f: object) -> tuple[str, str, str] | None:
        if _TORCH_NAME not in sys.modules:
            return None
        t = type(f)
        if t is types.FunctionType:
            attrs = f.__dict__
            if _DYNAMO_TARGET in attrs and _DYNAMO_DISABLED not in attrs:
                return _COMPILE, _COMPILE, _named(attrs[_DYNAMO_TARGET])
            return None
        if t.__module__.partition(".")[0] == _TORCH_NAME:
            if t.__name__ == "OptimizedModule":  # torch.compile of a module
                return _COMPILE, _COMPILE, _named(vars(f).get("_orig_mod", f))
            if t.__name__ in _SCRIPT_TYPES:  # named by its function (``name``) or class
                name = getattr(f, "original_name", None) or getattr(f, "name", None)
                return _SCRIPT, "TorchScript", name if isinstance(name, str) else t.__name__
        attrs = getattr(f, "__dict__", None)
        if isinstance(attrs, dict) and any(
            (c.__module__, c.__name__) == _MODULE_CLASS for c in t.__mro__
        ):  # a module of the person's: ``model.compile()``, or a compiled ``forward``
            forward = inspect.getattr_static(t, "forward", None)
            if attrs.get("_compiled_call_impl") is not None or (
                isinstance(forward, types.FunctionType) and _DYNAMO_TARGET in forward.__dict__
            ):
                return _COMPILE, _COMPILE, _named(f)
        return None

    def autograd_node(self, x: Any) -> str | None:
        node = x.grad_fn
        return None if node is None else type(node).__name__

    def tracks_gradient(self, x: Any) -> bool:
        return bool(x.requires_grad)

    def gradient(self, x: Any) -> Any:
        # a non-leaf has a gradient only where it retains one (reading it otherwise warns)
        return x.grad if x.is_leaf or x.retains_grad else None

    def with_autograd(
        self,
        x: Any,
        *,
        tracks: bool,
        gradient: Any = None,
        kind: type | None = None,
        graph: str | None = None,
    ) -> Any:
        if graph is not None:
            return self._graph_stand_in(x, graph, gradient)
        if tracks:
            if kind is not None and type(x) is not kind:
                x = kind(x, requires_grad=True)  # a Parameter
            else:
                x = x.requires_grad_(True)
            if gradient is not None and type(gradient) is type(x.detach()):
                x.grad = gradient
        elif kind is not None and type(x) is not kind and _of_bases(x, kind):
            # a subclass without that constructor: the plain tensor stands in
            with contextlib.suppress(TypeError):
                x = kind(x, requires_grad=False)
        return x

    def _graph_stand_in(self, x: Any, graph: str, gradient: Any) -> Any:
        """A non-leaf that records gradients, made from ``x`` by one copy: what a tensor of
        an autograd graph can be away from its graph. A backward pass reaching its leaf
        is noted, for its gradients stop there."""
        leaf = x.requires_grad_(True)
        leaf.register_hook(lambda _grad: self._reached.append(graph))
        stand_in = leaf.clone()
        if gradient is not None and type(gradient) is type(stand_in.detach()):
            stand_in.retain_grad()
            stand_in.grad = gradient
        return stand_in

    def cut_graphs_reached(self) -> list[str]:
        reached, self._reached[:] = list(self._reached), []
        return reached

    def devices(self) -> list[str]:
        if not self.available()[0]:
            return []
        torch = self.lib()
        found = ["cpu"]
        accelerator = self._accelerator()
        if accelerator is not None:
            kind, count = accelerator
            found += [f"{kind}:{i}" for i in range(count)]
        default = self._spell(torch.get_default_device())
        if default in found:
            found.remove(default)
            found.insert(0, default)
        return found

    def unavailable_kinds(self) -> list[tuple[str, str]]:
        if not self.available()[0] or self._accelerator() is not None:
            return []
        return [(f"torch:{self._expected_accelerator()}", NO_ACCELERATOR)]

    def _expected_accelerator(self) -> str:
        """The accelerator kind to name in the missing entry: ``mps`` on Apple builds."""
        return "mps" if self.lib().backends.mps.is_built() else "cuda"

    def namespace(self) -> Any:
        self.lib()
        import array_api_compat.torch

        return array_api_compat.torch

    def array_types(self) -> tuple[type, ...]:
        torch = loaded("torch")
        return (torch.Tensor,) if torch is not None else ()

    def _spell(self, device: Any) -> str:
        torch = self.lib()
        device = torch.device(device)
        if device.type == "cpu":
            return "cpu"
        if device.index is None:
            return f"{device.type}:{torch.accelerator.current_device_index()}"
        return str(device)

    def device_of(self, x: Any) -> str:
        if x.is_cpu:
            return "cpu"
        device = x.device
        spelled = _SPELLED.get(device)
        if spelled is None:
            spelled = _SPELLED[device] = (
                device.type if device.index is None else f"{device.type}:{device.index}"
            )
        return spelled

    def copy(self, x: Any) -> Any:
        return x.clone()

    def export_ready(self, x: Any, trail: Any) -> Any:
        if x.device.type == "meta":
            raise ConversionError("a torch 'meta' tensor carries no data to convert")
        if x.requires_grad:
            x = x.detach()
            trail.note("detached from autograd (the tensor had requires_grad=True)")
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
            trail.copied("the tensor had its conjugate/negative bit set: resolved with a copy")
        return x

    def data_pointer(self, x: Any) -> int | None:
        return x.data_ptr()

    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        torch = self.lib()
        if source is self:
            tensor = x
        else:
            ready = source.dlpack_ready(x, trail)
            try:
                tensor = torch.from_dlpack(ready)  # passes torch's current stream on GPUs
            except REFUSED as error:
                trail.copied(
                    f"DLPack import into torch failed ({why(error)}); copied through host NumPy"
                )
                try:
                    tensor = torch.from_numpy(source.host_copy(x))
                except TypeError as error:
                    raise ConversionError(f"torch cannot hold this array: {error}") from None
        if tensor.device != device:
            trail.copied(f"moved {tensor.device} → {device} with Tensor.to")
            tensor = tensor.to(device)
        return tensor

    def misspelled_device(self, device: str) -> str | None:
        return indexed_device_error("torch", device, "cuda:0")

    def resolve_device(self, device: str | None) -> Any:
        torch = self.lib()
        if device is None:
            device = self._spell(torch.get_default_device())
        if device == "cpu":
            return torch.device("cpu")
        try:
            target = torch.device(device)
        except (RuntimeError, TypeError, ValueError) as error:
            raise DeviceUnavailable(f"torch does not know the device {device!r}: {error}") from None
        if target.type == "cpu":
            return torch.device("cpu")
        if target.type == "meta":
            raise DeviceUnavailable("torch 'meta' tensors carry no data: not a replay device")
        accelerator = self._accelerator()
        if accelerator is None:
            raise DeviceUnavailable(f"torch:{device}: {NO_ACCELERATOR}")
        kind, count = accelerator
        if target.type != kind:
            raise DeviceUnavailable(f"torch's accelerator is {kind}, not {target.type}")
        index = torch.accelerator.current_device_index() if target.index is None else target.index
        if index >= count:
            raise DeviceUnavailable(
                f"torch sees {count} {kind} device(s); there is no {kind}:{index}"
            )
        return torch.device(kind, index)

    def _exportable(self, x: Any) -> Any:
        """``x`` detached, on the host, with conjugate/negative bits resolved."""
        if x.device.type == "meta":
            raise ConversionError("a torch 'meta' tensor carries no data to convert")
        x = x.detach()
        if x.device.type != "cpu":
            x = x.cpu()
        return x.resolve_conj().resolve_neg()

    def to_host(self, x: Any) -> numpy.ndarray:
        tensor = self._exportable(x)
        try:
            return tensor.numpy()
        except TypeError:  # bfloat16, float8, complex32: NumPy has no such dtype
            return tensor.to(
                self.lib().complex64 if tensor.is_complex() else self.lib().float32
            ).numpy()

    def host_copy(self, x: Any) -> numpy.ndarray:
        host = self.to_host(x)
        if x.device.type == "cpu" and host.ctypes.data == x.data_ptr():
            return host.copy()
        return host  # cast, resolved or moved: already a fresh buffer


def _of_bases(x: Any, kind: type) -> bool:
    """Whether ``x`` is of a type the array class ``kind`` derives from (a tensor, for a
    Parameter)."""
    return isinstance(x, tuple(k for k in kind.__mro__[1:] if k is not object))


def _accelerator_module(torch: Any) -> Any:
    """torch's module of the accelerator it sees (``torch.cuda``), or None."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None or not accelerator.is_available():
        return None
    get = getattr(torch, "get_device_module", None)
    return get() if get is not None else None


def _state_tensor(torch: Any, raw: bytes) -> Any:
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8)


def restore_generator(kind: type, device: str, raw: bytes) -> Any:
    """A ``torch.Generator`` (of the class ``kind``) on ``device`` in the state ``raw``:
    how a generator arrives in another process."""
    import torch

    generator = kind(device=device)
    generator.set_state(_state_tensor(torch, raw))  # type: ignore[attr-defined]
    return generator
