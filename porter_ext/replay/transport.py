"""How a replay's inputs reach a worker and its outputs come back, without pickling buffers.

Values travel as one cloudpickle stream (so the person's functions and classes go by
value, and objects shared between inputs stay shared), except arrays: every array of any
library, wherever it sits in the object graph, leaves the stream as an `ArrayMeta` and
its bytes go separately: into one block of shared memory on the same machine (one copy,
which is also the pre-run snapshot), or into the kernel protocol's message buffers for a
kernel elsewhere. The receiver rebuilds each array in its own library and device where it
can (zero-copy from shared memory through DLPack), keeping the autograd state its
library's adapter reads (torch's gradients and parameter classes; a tensor of an autograd
graph, whose graph cannot travel, arrives as a copy of its data that records gradients);
random generators that cannot be pickled travel as their state, as their adapter says.
"""

from __future__ import annotations

import io
import pickle
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import cloudpickle

from porter_ext.backends import backend_for, device_of, generator_reduction, get_backend
from porter_ext.backends.base import dtype_name
from porter_ext.record import hooks_importlib_bootstrap as hooks
from porter_ext.record.strict import NamespaceView, recorded_namespace, unwrap_namespace
from porter_ext.replay import shared_blocks
from porter_ext.replay.inputs import is_array_input

if TYPE_CHECKING:
    from porter_ext.record.sites import Site

#: offsets of arrays inside a shared block are multiples of this (DLPack imports zero-copy)
ALIGNMENT = 64


class Unsendable(ValueError):
    """An input that cannot travel to a worker; the message names it."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"cannot send {name!r} to the worker: {reason}")
        self.name, self.reason = name, reason


@dataclass(frozen=True)
class ArrayMeta:
    """What the receiver needs to rebuild one array: where its bytes are, and what it was."""

    index: int
    library: str
    device: str | None
    dtype: str  # the array's own dtype ("bfloat16" travels as float32 bytes)
    host_dtype: str
    shape: tuple[int, ...]
    tracks_gradient: bool = False  # autograd records operations on it
    subclass: type | None = None  # a subclass of the library's array type to rebuild
    #: the operation of an autograd graph that made it (its graph stays with the sender)
    graph: str | None = None


@dataclass
class Parcel:
    """One pickled stream and where its arrays' bytes are: ``(offset, nbytes)`` in the
    shared block ``shm_name``, or one message buffer each (``buffers``)."""

    payload: bytes
    spans: list[tuple[int, int]] = field(default_factory=list)
    shm_name: str | None = None
    buffers: list[memoryview] = field(default_factory=list)
    nbytes: int = 0
    _block: shared_blocks.Block | None = field(default=None, repr=False)

    def header(self) -> dict[str, Any]:
        """What travels beside the payload (small, JSON-able)."""
        return {"spans": self.spans, "shm": self.shm_name}

    def release(self) -> None:
        """Free the shared block (the sender's job once every receiver is done): it is
        kept for a later cell's inputs."""
        block, self._block = self._block, None
        if block is not None:
            shared_blocks.give_back(block)

    def hand_over(self) -> None:
        """Leave the shared block to the receiver, who unlinks it once it has read it."""
        block, self._block = self._block, None
        if block is not None:
            block.close()


class _Sender(cloudpickle.Pickler):
    """cloudpickle with arrays and generators taken out of the stream."""

    def __init__(self, file: io.BytesIO, hosts: list[Any], graphs: bool = False):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.hosts, self.graphs = hosts, graphs

    def reducer_override(self, obj: Any) -> Any:
        if is_array_input(obj) and not getattr(getattr(obj, "dtype", None), "hasobject", False):
            return self._array(obj)
        if obj is hooks.SLOTS:  # the recorder's call-site table: the receiver has its own
            return _receiver_slots, ()
        if isinstance(obj, types.FunctionType) and obj.__code__.co_filename == hooks.__file__:
            return _no_hook, ()  # a recording hook: the receiver binds its own
        if isinstance(obj, NamespaceView):  # a namespace seen through porter's recorder
            return _restore_view, (unwrap_namespace(obj), obj._strict, obj._version)
        if isinstance(obj, memoryview):  # cloudpickle would send a read-only bytes
            return _restore_memoryview, (obj.tobytes(), obj.format, obj.shape, obj.readonly)
        reduction = generator_reduction(obj)  # a generator that pickles through its state
        if reduction is not None:
            return reduction
        reduction = _guarded_container_reduction(obj)
        if reduction is not None:
            return reduction
        return super().reducer_override(obj)

    def _array(self, x: Any) -> Any:
        backend = backend_for(x)
        node = backend.autograd_node(x)
        # a tensor of an autograd graph goes as its data (a graph cannot leave this
        # process); an input is rebuilt there as a tensor made by an operation that
        # records gradients (`Backend.with_autograd`), a replay's output as data alone
        graph = node if not self.graphs else None
        try:
            host = backend.to_host(x)
        except Exception as error:  # a tracer, a meta tensor: no data to send
            raise pickle.PicklingError(
                f"{type(x).__name__} has no data to send ({error})"
            ) from None
        tracks = (node is None or graph is not None) and backend.tracks_gradient(x)
        meta = ArrayMeta(
            index=len(self.hosts),
            library=backend.name,
            device=device_of(x),
            dtype=dtype_name(x),
            host_dtype=str(host.dtype),
            shape=tuple(int(n) for n in host.shape),
            tracks_gradient=tracks,
            subclass=backend.array_subclass(x),
            graph=graph,
        )
        self.hosts.append(host)
        return _restore_array, (meta, backend.gradient(x) if tracks else None)


def _guarded_container_reduction(obj: Any) -> tuple | None:
    """How a dict or list subclass that refuses item assignment (a ``frozendict`` whose
    ``__setitem__`` raises) travels: pickle's default fills it through ``__setitem__`` or
    ``append``, which would fail on the receiving side; this fills it through ``dict``'s
    and ``list``'s own methods once it exists (so it may hold itself), then sets its state.
    None for every other object (pickled as pickle does it)."""
    kind = type(obj)
    if kind is dict or kind is list or not isinstance(obj, dict | list):
        return None
    if kind.__reduce_ex__ is not object.__reduce_ex__ or kind.__reduce__ is not object.__reduce__:
        return None  # the class says how it pickles
    guarded = (
        kind.__setitem__ is not dict.__setitem__
        if isinstance(obj, dict)
        else kind.append is not list.append or kind.extend is not list.extend
    )
    if not guarded:
        return None
    new, args, state, *_ = obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    items = list(obj.items()) if isinstance(obj, dict) else list(obj)
    return new, args, (items, state), None, None, _fill_guarded


def _fill_guarded(obj: Any, filling: tuple[list, Any]) -> None:
    """`_guarded_container_reduction`'s receiving side: the items, then the state as
    pickle would set it (``__setstate__``, or the ``__dict__`` and slots)."""
    items, state = filling
    if isinstance(obj, dict):
        dict.update(obj, items)
    else:
        list.extend(obj, items)
    if state is None:
        return
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        vars(obj).update(state)
    for name, value in (slots or {}).items():
        object.__setattr__(obj, name, value)


def pack(values: dict[str, Any], *, local: bool = True, results: bool = False) -> Parcel:
    """Serialise ``values`` (name → object) as they are now. Raises `Unsendable` naming the
    first value that cannot travel (an open file, a lock, a generator object).
    ``results``: a replay's outputs, where a tensor of an autograd graph goes as its data
    alone (an input goes as its data too, rebuilt as made by an operation: `ArrayMeta`)."""
    hosts: list[Any] = []
    stream = io.BytesIO()
    try:
        _Sender(stream, hosts, results).dump(values)
    except Exception as error:
        raise _culprit(values, error) from None
    parcel = Parcel(stream.getvalue())
    if local:
        _to_shared_block(parcel, hosts, reuse=not results)
    else:
        import numpy as np

        for host in hosts:
            flat = np.ascontiguousarray(host)
            parcel.buffers.append(memoryview(flat).cast("B"))
            parcel.spans.append((0, flat.nbytes))
            parcel.nbytes += flat.nbytes
    return parcel


def _culprit(values: dict[str, Any], error: Exception) -> Unsendable:
    for name, value in values.items():
        try:
            _Sender(io.BytesIO(), []).dump(value)
        except Exception as inner:
            return Unsendable(name, _reason(inner))
    return Unsendable(", ".join(values), _reason(error))


def _reason(error: Exception) -> str:
    text = str(error).split("\n")[0]
    return text or type(error).__name__


def _to_shared_block(parcel: Parcel, hosts: list[Any], *, reuse: bool) -> None:
    import numpy as np

    offset = 0
    for host in hosts:
        parcel.spans.append((offset, host.nbytes))
        offset += -(-host.nbytes // ALIGNMENT) * ALIGNMENT
    parcel.nbytes = offset
    if not hosts:
        return
    block = shared_blocks.take(offset) if reuse else shared_blocks.fresh(offset)
    parcel._block, parcel.shm_name = block, block.name
    for host, (start, _nbytes) in zip(hosts, parcel.spans, strict=True):
        view = np.ndarray(host.shape, host.dtype, buffer=block.buf, offset=start)
        np.copyto(view, host, casting="no")


# -- receiving -----------------------------------------------------------------------------


@dataclass
class Receiver:
    """How the receiving side rebuilds arrays: ``place(host, meta)`` turns a host NumPy
    array (a view of the sender's bytes) into the array to use."""

    place: Callable[[Any, ArrayMeta], Any]
    hosts: list[Any] = field(default_factory=list)


#: the receiver of the parcel this thread unpacks: each worker's answer is read on its
#: own thread, and several may be read at once
_receiving = threading.local()


def unpack(
    parcel: Parcel,
    place: Callable[[Any, ArrayMeta], Any],
    *,
    take: bool = False,
    keep_classes: bool = False,
    copy_on_write: bool = False,
) -> Any:
    """The values of ``parcel``, each array rebuilt by ``place`` from a host view of its
    bytes (writable, aliasing shared memory, when the parcel is local). ``take``: the
    block is this side's to unlink (at once: ``place`` may keep views of it, which hold
    its pages until they go, see `host_kept`); otherwise it stays mapped (see
    `shared_blocks.mapped`). ``keep_classes``: a class sent by value that is already
    here (one of the person's, sent to a worker and coming back with a replay's outputs)
    is taken as it is, never overwritten with the copy in the stream (`_KeepClasses`).
    ``copy_on_write``: the block is mapped privately for this one parcel, so that writes
    to its arrays copy the pages they touch and nothing else while other workers read the
    same block (ask `shared_blocks.maps_privately` first)."""
    import numpy as np

    block = None
    if take:
        shared_blocks.close_unused()  # blocks read earlier whose last views are gone now
    private = None
    if parcel.shm_name and copy_on_write:
        private = shared_blocks.mapped_privately(parcel.shm_name)
    elif parcel.shm_name:
        block = (
            shared_blocks.Block(parcel.shm_name) if take else shared_blocks.mapped(parcel.shm_name)
        )
    hosts = []
    for i, (start, nbytes) in enumerate(parcel.spans):
        if private is not None:
            source = memoryview(private)[start : start + nbytes]
        elif block is not None:
            source = block.buf[start : start + nbytes]
        else:
            source = parcel.buffers[i]
        hosts.append(np.frombuffer(source, dtype=np.uint8))
    source = None
    previous = getattr(_receiving, "receiver", None)
    _receiving.receiver = Receiver(place, hosts)
    try:
        if keep_classes:
            return _KeepClasses(io.BytesIO(parcel.payload)).load()
        return pickle.loads(parcel.payload)
    finally:
        _receiving.receiver = previous
        hosts.clear()
        if block is not None and take:
            block.unlink()  # its name goes now; its mapping once no array views it (an
            shared_blocks.close_later(block)  # exception's traceback can hold one)


class _KeepClasses(pickle.Unpickler):
    """An unpickler that rebuilds cloudpickle's by-value classes by reference where the
    class is already in this process. cloudpickle finds such a class by its tracking id
    and then sets every attribute of the stream's copy on it: the methods of the person's
    class would become the worker's copies (other globals, a file name of the worker's),
    and a plain call of them would fail."""

    def __init__(self, file: io.BytesIO):
        super().__init__(file)
        self.kept: set[int] = set()

    def find_class(self, module: str, name: str) -> Any:
        if module == cloudpickle.cloudpickle.__name__:
            if name in ("_make_skeleton_class", "_make_skeleton_enum"):
                return self._skeleton(getattr(cloudpickle.cloudpickle, name))
            if name == "_class_setstate":
                return self._class_setstate
        return super().find_class(module, name)

    def _skeleton(self, make: Callable[..., type]) -> Callable[..., type]:
        def skeleton(*args: Any) -> type:
            tracker_id = args[-2]  # both makers take (..., class_tracker_id, extra)
            known = cloudpickle.cloudpickle._DYNAMIC_CLASS_TRACKER_BY_ID.get(tracker_id)
            made = make(*args)
            if known is not None and made is known:
                self.kept.add(id(made))
            return made

        return skeleton

    def _class_setstate(self, obj: type, state: Any) -> type:
        if id(obj) in self.kept:
            return obj
        return cloudpickle.cloudpickle._class_setstate(obj, state)


def _restore_array(meta: ArrayMeta, grad: Any) -> Any:
    import numpy as np

    receiver = getattr(_receiving, "receiver", None)
    if receiver is None:
        raise pickle.UnpicklingError("an array arrived outside porter's transport")
    raw = receiver.hosts[meta.index]
    host = raw.view(np.dtype(meta.host_dtype)).reshape(meta.shape)
    value = receiver.place(host, meta)
    backend = backend_for(value)  # a host NumPy copy of a tensor (an output read back) stays NumPy
    if backend is not None and (meta.tracks_gradient or meta.subclass is not None):
        value = backend.with_autograd(
            value, tracks=meta.tracks_gradient, gradient=grad, kind=meta.subclass, graph=meta.graph
        )
    return value


def _receiver_slots() -> list:
    return hooks.SLOTS


def _no_hook() -> None:
    return None


def slots_in_use() -> int:
    """How many call sites this process's recorder has numbered (functions rewritten here
    refer to them by number, so a receiver must number at least as many)."""
    return len(hooks.SLOTS)


def sites_in_use() -> tuple[Site, ...]:
    """The sites of code this process rewrote for IPython to compile (``%port on`` cells, a
    fix put in effect), which that code reads by index (``__porter_sites__[k]``)."""
    return tuple(hooks.SITES)


def adopt_sites(sites: tuple[Site, ...]) -> None:
    """Hold the sender's ``sites`` at the sender's indices, so that functions it rewrote
    find theirs. Entries they replace belong to code this process compiled during an
    earlier replay, which ran with that replay."""
    hooks.SITES[: len(sites)] = sites


def reserve_slots(count: int) -> None:
    """Number at least ``count`` call sites here, so that functions rewritten by the sender
    find theirs (unfilled: their first calls are recorded as new)."""
    hooks.SLOTS.extend([None] * (count - len(hooks.SLOTS)))


def _restore_view(real: Any, strict: bool, version: str) -> Any:
    return recorded_namespace(real, strict=strict, version=version)


def _restore_memoryview(raw: bytes, format: str, shape: tuple, readonly: bool) -> memoryview:
    view = memoryview(raw if readonly else bytearray(raw))
    return view.cast("B").cast(format, shape) if shape else view


def own_library(host: Any, meta: ArrayMeta, *, private: bool) -> Any:
    """``host`` as an array of the library and device it came from (zero-copy through
    DLPack where possible), or host NumPy when that library or device is not here;
    ``private``: first copied, so that writes never reach a buffer others read."""
    from porter_ext.backends import BackendUnavailable, ConversionError, aligned_copy, convert_to

    if private or not host.flags.writeable:
        host = aligned_copy(host)
    try:
        backend = get_backend(meta.library)
        conv = convert_to(host, backend, meta.device)
    except (BackendUnavailable, ConversionError):
        return host
    value = conv.value
    if meta.dtype != meta.host_dtype and meta.dtype == "bfloat16":
        namespace = backend.namespace()
        if hasattr(namespace, "bfloat16"):
            value = namespace.astype(value, namespace.bfloat16)
    return value


def host_kept(host: Any, meta: ArrayMeta) -> Any:
    """``host`` as it is: a view of a block this side takes (a replay's outputs, read
    without a copy; the block's name is gone at once, its pages once no array views it)."""
    return host


def host_copy(host: Any, meta: ArrayMeta) -> Any:
    """``host`` copied out of the sender's memory (for outputs coming back)."""
    import numpy as np

    return np.array(host, copy=True)
