"""Device findings: where a cell's data did not stay on, or land on, the device it should.

Judged from the recorded calls (the device of each call's array arguments and result)
and, because a creation call inside ``jax.jit`` only records ``traced``, from where the
cell's final outputs landed too. The JAX facts behind the rules (FACTS.md): inside jit,
``array_api_compat.device(x)`` is None, so ``xp.zeros(n, device=device(x))`` silently
means the default device; a jitted function whose outputs do not depend on its inputs
returns them on the default device even when the inputs live on ``cpu:1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from porter_ext.backends import LIBRARIES, TRACED, SpecError, all_backends, device_of, get_backend
from porter_ext.model.calls import CallRecord
from porter_ext.model.comparison import DeviceFinding

if TYPE_CHECKING:
    from porter_ext.replay.run import ReplayResult

#: the standard's functions that make a new array (the last part of a call's qualified
#: name), and every library's own (its adapter's ``creation_calls``)
CREATION = frozenset(
    {
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "eye",
        "asarray",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "meshgrid",
    }
).union(*(b.creation_calls for b in all_backends()))
#: creation functions that take an array and should keep its device
FROM_ARRAY = frozenset(
    {"asarray", "zeros_like", "ones_like", "empty_like", "full_like", "meshgrid"}
).union(*(b.creation_from_array for b in all_backends()))
#: calls that move data on purpose: a different output device is what they are for (the
#: standard's, and each library's own: its adapter's ``moving_calls``)
MOVES = frozenset({"to_device", "from_dlpack"}).union(*(b.moving_calls for b in all_backends()))
_NOT_A_DEVICE = frozenset({TRACED, "unknown"})


_LIBRARY_DEVICES: dict[str, tuple[str, ...]] = {}


def _library_devices(library: str) -> tuple[str, ...]:
    """The devices of ``library`` in its own spelling ((): unknown, or not imported)."""
    if library not in _LIBRARY_DEVICES:
        try:
            backend = get_backend(library)
        except SpecError:
            return ()
        if not backend.array_types():  # not imported: none of its arrays can exist
            return ()
        _LIBRARY_DEVICES[library] = tuple(backend.devices())
    return _LIBRARY_DEVICES[library]


def _is_host(device: str) -> bool:
    return device.lower().startswith("cpu")  # cpu, cpu:0 (JAX), CPU_DEVICE (strict)


def _host_copy(library: str, ins: list[str], out: str) -> bool:
    """Whether a call of ``library`` only brought host arrays of another library into
    its own host memory (NumPy's ``cpu`` into JAX's ``cpu:0``): the same memory, spelled
    twice, not a placement to fix. Whether it landed where the cell's other arrays live
    is the default-device rule's to say."""
    if not _is_host(out) or not all(_is_host(d) for d in ins):
        return False
    own = set(_library_devices(library))
    others = {d for name in LIBRARIES if name != library for d in _library_devices(name)}
    return all(d in others and d not in own for d in ins)


def _where(devices: Iterable[str]) -> str:
    return ", ".join(sorted(set(devices)))


def device_findings(
    calls: list[CallRecord],
    *,
    backend: str | None,
    input_devices: list[str],
    default_device: str | None,
    outputs: Mapping[str, Any] | None = None,
) -> list[DeviceFinding]:
    """Findings for one run of a cell (the original or a replay on ``backend``).

    ``input_devices`` are the devices of the cell's array inputs, ``default_device`` the
    backend's default (None: skip the default-device checks); ``outputs`` (name → value)
    lets outputs that landed on the default device be named even when the call that
    made them only recorded ``traced``.
    """
    homes = [d for d in dict.fromkeys(input_devices) if d not in _NOT_A_DEVICE]
    # the transformations the run went through, named only where there were some
    transforms = list(dict.fromkeys(c.name for c in calls if c.kind == "transformation"))
    inside = ", ".join(transforms) if transforms else "jit, grad or vmap"
    off_default = bool(homes) and default_device is not None and default_device not in homes
    found: list[DeviceFinding] = []

    def add(call: CallRecord, kind: str, message: str) -> None:
        # at the call's line in this cell (for code another cell wrote, where this cell
        # called into it: the call's ``origin`` says where it is written)
        found.append(DeviceFinding(call.line, call.name, kind, backend, message))  # type: ignore[arg-type]

    for call in calls:
        base = call.name.rpartition(".")[2]
        ins = [d for d in call.devices_in if d not in _NOT_A_DEVICE]
        out = call.device_out
        placed = "device" in getattr(call, "keywords", [])
        if call.status == "host_sync":
            add(
                call,
                "host_sync",
                call.message or f"{call.name} copies data to the host and waits for the device",
            )
        if (
            base == "device"
            and call.devices_in
            and set(call.devices_in) == {TRACED}
            and out is None
        ):
            where = f" ({default_device})" if default_device else ""
            add(
                call,
                "traced_device",
                f"{call.name} of a traced value (inside {inside}) gives None: an array "
                f"created with device=None lands on the default device{where}, not where the "
                "inputs live",
            )
        if len(set(ins)) > 1:
            add(call, "cross_device", f"{call.name} mixes arrays on {_where(ins)}")
        if out is None or out in _NOT_A_DEVICE or placed:
            continue
        if base in CREATION:
            if base in FROM_ARRAY and ins and not _host_copy(call.library, ins, out):
                if out not in ins:
                    add(
                        call,
                        "default_device_creation",
                        f"{call.name} put its result on {out}, not on {_where(ins)} where its "
                        "input lives",
                    )
            elif off_default and out == default_device and not set(ins) & set(homes):
                add(
                    call,
                    "default_device_creation",
                    f"{call.name} without device= put its result on the default device {out} "
                    f"while the cell's arrays live on {_where(homes)}: pass device=x.device",
                )
        elif base not in MOVES and len(set(ins)) == 1 and out not in ins:
            add(
                call,
                "implicit_transfer",
                f"{call.name} read arrays on {ins[0]} and put its result on {out}",
            )
    if off_default and outputs:
        found += _output_findings(outputs, backend, default_device, homes, transforms)  # type: ignore[arg-type]
    return found


def replay_findings(result: ReplayResult, outputs: Mapping[str, Any] | None) -> list[DeviceFinding]:
    """The device findings of one replay on its spec, from its calls, its inputs'
    devices and its ``outputs`` (where they are: in the worker, or here in-process).
    Empty for a replay that did not run to its end or never touched its target
    (``not_exercised``): it says nothing about the target's placement."""
    if result.status not in ("ok", "error"):
        return []
    return device_findings(
        result.calls,
        backend=result.backend,
        input_devices=result.input_devices,
        default_device=result.default_device,
        outputs=outputs,
    )


def _output_findings(
    outputs: Mapping[str, Any],
    backend: str | None,
    default: str,
    homes: list[str],
    transforms: list[str],
) -> list[DeviceFinding]:
    from porter_ext.replay.run import leaves

    # inside a transformation, results that do not depend on the inputs land on the
    # default device: said only where the cell went through one
    why = (
        f" (inside {', '.join(transforms)}, results that do not depend on the inputs "
        "land on the default device)"
        if transforms
        else ""
    )
    found = []
    for name, value in outputs.items():
        for path, leaf in leaves(value, name, {}).items():
            if device_of(leaf) == default:
                found.append(
                    DeviceFinding(
                        None,
                        path,
                        "default_device_creation",
                        backend,
                        f"output {path} landed on the default device {default} while the "
                        f"cell's array inputs live on {_where(homes)}: it was created without "
                        f"device={why}",
                    )
                )
    return found
