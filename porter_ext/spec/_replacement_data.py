"""The table behind :mod:`porter_ext.spec.replacements`, grouped by what a porter meets.

Names are relative to each library's array namespace (``"linalg.norm"``,
``"cuda.synchronize"`` for torch, ``"device_put"`` for jax's top level; jax.numpy functions
are plain names). Suggestion templates follow the placeholder rules of
``replacements.render_suggestion``: the array of a method is ``x``, and ``, axis={axis}``
disappears when the call passed no axis. Every library-specific name is checked against
the installed library by ``tests/spec/test_replacements.py`` (CuPy excepted).
"""

from __future__ import annotations

from porter_ext.spec.replacement import Replacement

_LIBS = {"n": "numpy", "t": "torch", "j": "jax", "c": "cupy", "*": "*"}

NS = "non_standard"
USAGE = "non_standard_usage"
DEVICE = "device_specific"
SYNC = "host_sync"

#: what an entry without a rewrite says by default
NO_VERIFIED_REWRITE = "no verified rewrite: the suggestion is advice to apply by hand"
NO_RANDOM_REWRITE = (
    "random draws: a different generator gives different numbers, so no rewrite can be "
    "verified against the original"
)
NO_SEED_REWRITE = (
    "the standard has no random numbers, so nothing to seed: the nearest portable form is "
    "a host generator, rng = np.random.default_rng(seed), whose draws move with "
    "xp.asarray(..., device=device); no rewrite, since every draw after it would change"
)
NO_TUPLE_REWRITE = (
    "torch returns a (values, indices) named tuple here: the standard needs two calls, and "
    "code reading .values/.indices must change with them"
)

_entries: list[Replacement] = []


def _add(
    libs: str,
    kind: str,
    name: str,
    status: str,
    standard_name: str | None,
    suggestion: str,
    note: str,
    when: str | None = None,
    *,
    rewrite: str | None = None,
    example: str | None = None,
    no_rewrite: str = "",
    parts: tuple[tuple[str, str], ...] = (),
    portable: str | None = None,
) -> None:
    """One entry per library letter in ``libs`` (n numpy, t torch, j jax, c cupy, * any).

    ``rewrite`` is the executable template (`porter_ext.spec.rewrites`) and ``example``
    the original spelling it is verified on; without a rewrite, ``no_rewrite`` says why
    (by default: none has been verified, the suggestion is advice). ``parts`` are the
    templates of the fields of a tuple result (``.values``/``[0]``, ``.indices``/``[1]``)."""
    if (rewrite is not None or parts) and example is None:
        raise ValueError(f"the rewrite of {name} has no example to verify it on")
    reason = "" if rewrite is not None else (no_rewrite or NO_VERIFIED_REWRITE)
    for letter in libs:
        _entries.append(
            Replacement(
                _LIBS[letter],
                kind,
                name,
                status,
                standard_name,
                suggestion,
                when,
                note,
                rewrite,
                reason,
                example,
                parts,
                portable,
            )
        )


def _fn(
    libs: str, name: str, standard_name: str | None, suggestion: str, note: str, **rewrite: str
) -> None:
    _add(libs, "function", name, NS, standard_name, suggestion, note, **rewrite)


def _method(
    libs: str, name: str, standard_name: str | None, suggestion: str, note: str, **rewrite: str
) -> None:
    _add(libs, "method", name, NS, standard_name, suggestion, note, **rewrite)


def _renamed(name: str) -> str:
    return f"the standard spells it {name}"


# The table is laid out by hand, one entry (or one family of entries) per line or two.
# fmt: off

# --- runtime: torch.cuda.* -> torch.accelerator.* ---------------------------------------

_ACCELERATOR_NOTE = (
    "torch.cuda.* ties the code to one vendor; torch.accelerator is the same call for "
    "whatever accelerator is present (CUDA, ROCm, XPU, MPS)"
)
#: the runtime calls whose torch.accelerator form is the same call wherever CUDA is (and,
#: without an accelerator, gives the same: False, 0, or raises as torch.cuda does)
_ACCELERATOR_REWRITES = {
    "cuda.is_available": "{lib}.accelerator.is_available()",
    "cuda.device_count": "{lib}.accelerator.device_count()",
    "cuda.current_device": "{lib}.accelerator.current_device_index()",
    "cuda.synchronize": "{lib}.accelerator.synchronize()",
    "cuda.set_device": "{lib}.accelerator.set_device_index({arg0})",
}
_ACCELERATOR_ARGS = {"cuda.set_device": "0"}
_NO_ACCELERATOR_DIFFERS = (
    "without an accelerator torch.cuda.{} does nothing (or returns 0) while "
    "torch.accelerator's form raises RuntimeError: a rewrite would break CPU-only runs"
)
_ACCELERATOR_NO_REWRITE = {
    name: _NO_ACCELERATOR_DIFFERS.format(name.partition(".")[2] + "()")
    for name in ("cuda.empty_cache", "cuda.memory_allocated", "cuda.max_memory_allocated",
                 "cuda.memory_reserved")
}
for _name, _suggestion in {
    "cuda.synchronize": "torch.accelerator.synchronize()",
    "cuda.is_available": "torch.accelerator.is_available()",
    "cuda.device_count": "torch.accelerator.device_count()",
    "cuda.current_device": "torch.accelerator.current_device_index()",
    "cuda.set_device": "torch.accelerator.set_device_index({arg0})",
    "cuda.device": "torch.accelerator.device_index({arg0})",
    "cuda.current_stream": "torch.accelerator.current_stream()",
    "cuda.set_stream": "torch.accelerator.set_stream(stream)",
    "cuda.Stream": "torch.Stream()",
    "cuda.Event": "torch.Event()",
    "cuda.empty_cache": "torch.accelerator.empty_cache()",
    "cuda.memory_allocated": "torch.accelerator.memory_allocated()",
    "cuda.max_memory_allocated": "torch.accelerator.max_memory_allocated()",
    "cuda.memory_reserved": "torch.accelerator.memory_reserved()",
    "cuda.reset_peak_memory_stats": "torch.accelerator.reset_peak_memory_stats()",
    "cuda.mem_get_info": "torch.accelerator.get_memory_info()",
    "cuda.get_device_capability": "torch.accelerator.get_device_capability()",
    "mps.synchronize": "torch.accelerator.synchronize()",
    "mps.is_available": "torch.accelerator.is_available()",
    "backends.mps.is_available": "torch.accelerator.is_available()",
    "xpu.synchronize": "torch.accelerator.synchronize()",
    "xpu.is_available": "torch.accelerator.is_available()",
    "xpu.device_count": "torch.accelerator.device_count()",
}.items():
    _rewrite = _ACCELERATOR_REWRITES.get(_name)
    _add("t", "function", _name, DEVICE, None, _suggestion, _ACCELERATOR_NOTE,
         rewrite=_rewrite, example=f"lib.{_name}({_ACCELERATOR_ARGS.get(_name, '')})"
         if _rewrite else None, no_rewrite=_ACCELERATOR_NO_REWRITE.get(_name, ""))

for _name in ("cuda.manual_seed", "cuda.manual_seed_all"):
    _add("t", "function", _name, DEVICE, None, "torch.manual_seed({arg0})",
         "torch.manual_seed seeds the CPU and every accelerator")
_add("t", "function", "cuda.stream", DEVICE, None, "with torch.Stream():",
     "torch.Stream is a device-agnostic stream and its own context manager")
_add("t", "function", "device", DEVICE, None, "torch.accelerator.current_accelerator()",
     "naming 'cuda' ties the code to one vendor; current_accelerator() is the device of "
     "whatever accelerator is present (None without one), and arrays carry theirs in x.device",
     when="cuda_arg")

_CUPY_RUNTIME_NOTE = (
    "the standard has no runtime API; pass device= explicitly, and keep CuPy-only calls "
    "behind array_api_compat.is_cupy_namespace(xp)"
)
_add("c", "function", "cuda.Device", DEVICE, "asarray", "xp.asarray(x, device=device)",
     "selecting a device by context is CuPy-specific; " + _CUPY_RUNTIME_NOTE)
_add("c", "function", "cuda.runtime.getDeviceCount", DEVICE, "__array_namespace_info__",
     "len(xp.__array_namespace_info__().devices())",
     "the inspection API lists the devices of any library")
_add("c", "function", "cuda.runtime.deviceSynchronize", DEVICE, None,
     "if is_cupy_namespace(xp): cupy.cuda.runtime.deviceSynchronize()", _CUPY_RUNTIME_NOTE)
_add("c", "function", "cuda.Stream", DEVICE, None,
     "if is_cupy_namespace(xp): cupy.cuda.Stream()", _CUPY_RUNTIME_NOTE)
_add("c", "function", "cuda.get_current_stream", DEVICE, None,
     "if is_cupy_namespace(xp): cupy.cuda.get_current_stream()", _CUPY_RUNTIME_NOTE)
for _name in ("devices", "local_devices"):
    _add("j", "function", _name, NS, "__array_namespace_info__",
         "xp.__array_namespace_info__().devices()",
         "the inspection API lists the devices of any library",
         no_rewrite=f"no rewrite: jax.{_name}() needs no array, and the standard's "
         "xp.__array_namespace_info__().devices() needs the namespace of one "
         "(xp = array_namespace(x)); devices are no values a replay compares, so write it "
         "by hand where an array is at hand")

# --- placement and host transfers --------------------------------------------------------

_TO_DEVICE_NOTE = (
    "take the device from the data (x.device) or from the caller rather than naming one; "
    "x.to_device(device) and xp.asarray(x, device=device) are the standard spellings"
)
_add("t", "method", "cuda", DEVICE, "to_device", "x.to_device(device)",
     "ties the code to CUDA; " + _TO_DEVICE_NOTE,
     rewrite="{x}.to({lib}.accelerator.current_accelerator())", example="x.cuda()")
_add("t", "method", "cpu", DEVICE, "to_device", "x.to_device(device)",
     "a device-to-host copy that waits for the device when x is on an accelerator; "
     "for host data use np.from_dlpack(x, device='cpu')")
_add("t", "method", "to", DEVICE, "to_device", "x.to_device(device)",
     "ties the code to CUDA; " + _TO_DEVICE_NOTE, when="cuda_arg")
_add("t", "method", "to", DEVICE, "to_device", "x.to_device(device)", _TO_DEVICE_NOTE,
     when="device_arg")
_add("t", "method", "to", NS, "astype", "xp.astype(x, {dtype}, copy=False)",
     "a dtype cast is xp.astype in the standard", when="dtype_arg",
     rewrite="xp.astype({x}, {dtype}, copy=False)", example="x.to(lib.float32)")
_add("t", "method", "to", NS, "to_device", "x.to_device(y.device)",
     "x.to(y) takes both the device and the dtype of y: x.to_device(y.device) and "
     "xp.astype(x, y.dtype)")
_add("t", "method", "pin_memory", DEVICE, None, "x",
     "page-locked host memory only speeds up host-to-accelerator copies in PyTorch; "
     "drop it or keep it behind array_api_compat.is_torch_array(x)")
_add("t", "method", "get_device", DEVICE, "device", "x.device",
     "returns a CUDA ordinal (-1 on the CPU); the standard array carries its device")
_add("t", "attribute", "is_cuda", DEVICE, "device", "x.device",
     "asks for one vendor; compare x.device with the device you want instead")
_add("j", "function", "device_put", DEVICE, "asarray", "xp.asarray(x, device=device)",
     "jax.device_put is JAX's placement call; the standard moves arrays with "
     "xp.asarray(x, device=device) or x.to_device(device)")

_HOST_NOTE = (
    "copies to the host and waits for pending device work; keep values on the device "
    "as long as possible"
)
_ITEM_NOTE = (
    "reads one value on the host (a device sync); the standard spells it float(x), "
    "int(x), bool(x) or complex(x) on a 0-D array, by its dtype"
)
for _when, _py, _example in (("int_dtype", "int", "n.item()"), ("bool_dtype", "bool", "t.item()"),
                             ("complex_dtype", "complex", "c.item()"), (None, "float", "f.item()")):
    # the standard's name is the array's own conversion (x.__int__): it also tells a run's
    # verdict at the site which of the four the codemod writes
    _add("*", "method", "item", SYNC, f"__{_py}__", f"{_py}(x)", _ITEM_NOTE, when=_when,
         rewrite=f"{_py}({{x}})", example=_example)
_add("*", "method", "tolist", SYNC, None, "np.from_dlpack(x, device='cpu').tolist()",
     _HOST_NOTE)
# NumPy's from_dlpack takes any library's array (a view of CPU data, as .numpy() is); no
# device=: .numpy() takes CPU tensors only, and a replay binds np to its library's
# namespace, where the string 'cpu' names no device (jax, array-api-strict) while
# from_dlpack(x) keeps x where it is. The codemod imports NumPy as np where the cell does not
_add("t", "method", "numpy", SYNC, "from_dlpack", "np.from_dlpack(x)",
     _HOST_NOTE + "; DLPack hands CPU data over without a copy (for an accelerator's "
     "array, np.from_dlpack(x, device='cpu') copies it to the host)",
     rewrite="np.from_dlpack({x})", example="x.numpy()")
_add("c", "method", "get", SYNC, "from_dlpack", "np.from_dlpack(x, device='cpu')", _HOST_NOTE)
_add("c", "function", "asnumpy", SYNC, "from_dlpack", "np.from_dlpack(x, device='cpu')",
     _HOST_NOTE)
_add("j", "function", "device_get", SYNC, "from_dlpack", "np.from_dlpack(x, device='cpu')",
     _HOST_NOTE)
for _kind in ("function", "method"):
    _add("j", _kind, "block_until_ready", NS, None, "if is_jax_array(x): x.block_until_ready()",
         "waits for JAX's asynchronous dispatch; the standard has no synchronisation call, "
         "so keep it behind array_api_compat.is_jax_array(x) (benchmarks)")
_add("j", "method", "devices", NS, "device", "x.device",
     "the standard array has exactly one device, x.device")

# --- creation and conversion -------------------------------------------------------------

#: array()/tensor() always copy: asarray in the same library, saying so (a person's
#: torch.float64 stays as written, the library's own spelling of a standard dtype)
_LITERAL = "{lib}.asarray({x}, dtype={given_dtype}, device={device}, copy=True)"
_PORTABLE_LITERAL = "xp.asarray({x}, dtype={dtype}, device={device}, copy=True)"
_fn("njc", "array", "asarray", "xp.asarray(obj, dtype={dtype})",
    "array() is NumPy's spelling; xp.asarray(obj, copy=True) when a copy is the point",
    rewrite=_LITERAL, portable=_PORTABLE_LITERAL, example="lib.array([[1.5, 2.0], [3.0, -1.0]])")
_fn("t", "tensor", "asarray", "xp.asarray(data, dtype={dtype})",
    "torch.tensor always copies; xp.asarray(data, copy=True) says so in the standard",
    rewrite=_LITERAL, portable=_PORTABLE_LITERAL, example="lib.tensor([[1, 2], [3, 4]])")
_fn("t", "as_tensor", "asarray", "xp.asarray(data, dtype={dtype})", _renamed("asarray"))
_fn("t", "from_numpy", "asarray", "xp.asarray(a)",
    "or xp.from_dlpack(a) for a zero-copy view on the same device")
_fn("njc", "copy", "asarray", "xp.asarray(x, copy=True)", "the standard copies with asarray",
    rewrite="xp.asarray({x}, copy=True)", example="lib.copy(x)")
_fn("t", "clone", "asarray", "xp.asarray(x, copy=True)", "the standard copies with asarray",
    rewrite="xp.asarray({x}, copy=True)", example="lib.clone(x)")
_fn("nc", "ascontiguousarray", "asarray", "xp.asarray(x)",
    "memory layout is not part of the standard")
_fn("njc", "identity", "eye", "xp.eye({arg0})", _renamed("eye"))
_CREATION_KEYWORDS = ", dtype={given_dtype}, device={device}, requires_grad={requires_grad}"
for _name in ("zeros", "ones", "empty"):  # the shape as one tuple, in torch itself
    _add("t", "function", _name, USAGE, _name, f"xp.{_name}({{sizes}})",
         "the standard takes the shape as one tuple", when="varargs_shape",
         **({} if _name == "empty" else {  # an empty array's values: nothing to compare
             "rewrite": f"{{lib}}.{_name}({{sizes}}{_CREATION_KEYWORDS})",
             "example": f"lib.{_name}(2, 3)"}))
for _name in ("triu", "tril"):
    _add("*", "function", _name, USAGE, _name, f"xp.{_name}(x, k={{k}})",
         "the standard's diagonal offset is the keyword k= (torch's diagonal=)",
         when="offset_not_k", rewrite=f"xp.{_name}({{x}}, k={{k}})", example=f"lib.{_name}(m, 1)")

# --- renamed element-wise functions ------------------------------------------------------

for _name, _std, _libs in [
    ("absolute", "abs", "njct"), ("fabs", "abs", "njc"), ("arccos", "acos", "njct"),
    ("arcsin", "asin", "njct"), ("arctan", "atan", "njct"), ("arccosh", "acosh", "njct"),
    ("arcsinh", "asinh", "njct"), ("arctanh", "atanh", "njct"),
    ("invert", "bitwise_invert", "njc"), ("bitwise_not", "bitwise_invert", "njt"),
    ("rint", "round", "njc"), ("around", "round", "njc"), ("fix", "trunc", "nct"),
    ("conjugate", "conj", "njc"), ("neg", "negative", "t"),
]:
    _input = "i" if "invert" in _std else ("p" if _name.startswith("arc") else "x")
    _fn(_libs, _name, _std, f"xp.{_std}(x)", _renamed(_std), rewrite=f"xp.{_std}({{x}})",
        example=f"lib.{_name}({_input})")

# x.at[idx].add(v): the recorder sees JAX's update methods as jax functions of one operand
_AT_NOTE = (
    "x.at[idx].{op}(value) is JAX's functional update, not the standard's {op}; "
    "array-api-extra's at does the same on every library"
)
for _op in ("add", "multiply", "divide", "power"):  # two-operand standard names, one given
    _add("j", "function", _op, NS, None, f"xpx.at(x, idx).{_op}(value)",
         _AT_NOTE.format(op=_op), when="one_operand",
         no_rewrite="the array and the index are in the .at[...] before the call")

for _name, _std, _libs in [
    ("arctan2", "atan2", "njct"), ("power", "pow", "njc"),
    ("left_shift", "bitwise_left_shift", "njc"), ("right_shift", "bitwise_right_shift", "njc"),
    ("true_divide", "divide", "njct"), ("mod", "remainder", "njc"),
    ("sub", "subtract", "t"), ("mul", "multiply", "t"), ("eq", "equal", "t"),
    ("ne", "not_equal", "t"), ("gt", "greater", "t"), ("ge", "greater_equal", "t"),
    ("lt", "less", "t"), ("le", "less_equal", "t"),
]:
    _pair = "i, j" if "shift" in _name else "p, q"
    _fn(_libs, _name, _std, f"xp.{_std}(x1, x2)", _renamed(_std),
        rewrite=f"xp.{_std}({{x}}, {{arg1}})", example=f"lib.{_name}({_pair})")

_fn("njct", "float_power", "pow", "xp.pow(xp.astype(x1, xp.float64), x2)",
    "float_power computes in float64; pow keeps the input dtype",
    rewrite="xp.pow(xp.astype({x}, xp.float64), {arg1})", example="lib.float_power(p, q)")
_add("t", "function", "div", NS, "floor_divide", "xp.floor_divide(x1, x2)",
     "rounding_mode='floor' is the standard's floor_divide", when="floor_rounding",
     rewrite="xp.floor_divide({x}, {arg1})", example="lib.div(i, j, rounding_mode='floor')")
_add("t", "function", "div", NS, "trunc", "xp.trunc(xp.divide(x1, x2))",
     "the standard has no truncating division; divide, then trunc (a floating result: for "
     "integer arrays xp.astype it back, or use floor_divide where both signs are known)",
     when="trunc_rounding", rewrite="xp.trunc(xp.divide({x}, {arg1}))",
     example="lib.div(p, q, rounding_mode='trunc')")
_fn("t", "div", "divide", "xp.divide(x1, x2)", _renamed("divide"),
    rewrite="xp.divide({x}, {arg1})", example="lib.div(p, q)")
_EXP2_NOTE = "the standard has no exp2; 2.0 ** x (the array's __rpow__) keeps x's floating dtype"
_EXP2_CAST = (
    "exp2 of an array that is not floating-point gives floats, and 2.0 ** x would mix kinds: "
    "cast first, 2.0 ** xp.astype(x, xp.float64)"
)
_add("njct", "function", "exp2", NS, "pow", "2.0 ** x", _EXP2_NOTE,
     when="real_floating", rewrite="2.0 ** {x}", example="lib.exp2(x)")
_fn("njct", "exp2", None, "xp.backend.exp2(x)",
    "the standard has no exp2; keep it through the escape hatch xp.backend.exp2(x) to mark "
    "it as acknowledged (or write xp.pow(2.0, x), scalars accepted from 2024.12)",
    no_rewrite=_EXP2_CAST)
_fn("t", "rsqrt", "sqrt", "1 / xp.sqrt(x)", "the standard has no rsqrt",
    rewrite="1 / xp.sqrt({x})", example="lib.rsqrt(p)")
_fn("t", "clamp", "clip", "xp.clip(x, min={min}, max={max})", _renamed("clip"),
    rewrite="xp.clip({x}, min={min}, max={max})", example="lib.clamp(x, 0.0, 1.0)")

# --- shape manipulation ------------------------------------------------------------------

_fn("njct", "concatenate", "concat", "xp.concat(arrays, axis={axis})", _renamed("concat"),
    rewrite="xp.concat({x}, axis={axis})", example="lib.concatenate([x, y], 1)")
_fn("t", "cat", "concat", "xp.concat(arrays, axis={axis})", _renamed("concat"),
    rewrite="xp.concat({x}, axis={axis})", example="lib.cat([x, y], 1)")
_fn("njc", "transpose", "permute_dims", "xp.permute_dims(x, {axes})",
    "the standard needs the axes spelled out (transpose without axes reverses them all); "
    "xp.matrix_transpose(x) swaps the last two")
_fn("njc", "swapaxes", "permute_dims", "xp.permute_dims(x, axes)",
    "the standard has no swapaxes: pass the axes with the two exchanged to permute_dims")
for _name in ("transpose", "swapaxes", "swapdims"):
    _fn("t", _name, "permute_dims", "xp.permute_dims(x, axes)",
        f"torch.{_name} exchanges two axes: pass all axes with those two exchanged to "
        "permute_dims, or use xp.matrix_transpose(x) for the last two")
_fn("t", "permute", "permute_dims", "xp.permute_dims(x, {axes})", _renamed("permute_dims"))
_fn("t", "t", "matrix_transpose", "xp.matrix_transpose(x)",
    "the standard's matrix_transpose swaps the last two axes")
_fn("t", "movedim", "moveaxis", "xp.moveaxis(x, {arg1}, {arg2})",
    "the standard spells it moveaxis (2023.12)")
_fn("t", "unsqueeze", "expand_dims", "xp.expand_dims(x, axis={axis})", _renamed("expand_dims"),
    rewrite="xp.expand_dims({x}, axis={axis})", example="lib.unsqueeze(x, 0)")
_fn("njct", "ravel", "reshape", "xp.reshape(x, (-1,))", "the standard has no ravel",
    rewrite="xp.reshape({x}, (-1,))", example="lib.ravel(x)")
_fn("t", "flatten", "reshape", "xp.reshape(x, (-1,))",
    "the standard has no flatten; with start_dim, reshape to the partial shape",
    rewrite="xp.reshape({x}, (-1,))", example="lib.flatten(x)")
_fn("njct", "hstack", "concat", "xp.concat(arrays, axis=1)",
    "hstack joins 1-D arrays along axis 0 and others along axis 1: pick the axis")
_add("njct", "function", "vstack", NS, "stack", "xp.stack(arrays, axis=0)",
     "vstack makes 1-D arrays the rows of a new array: the standard's stack",
     when="vectors", rewrite="xp.stack({x}, axis=0)", example="lib.vstack([v, v])")
_add("njct", "function", "vstack", NS, None,
     "xp.concat([xp.reshape(a, (1, -1)) if a.ndim == 1 else a for a in arrays], axis=0)",
     "vstack first makes 1-D arrays rows, then joins along axis 0",
     when="mixed_ranks",
     no_rewrite="the arrays joined have several ranks (or are not all arrays): no one "
     "standard call joins them; reshape the 1-D ones to rows, then xp.concat")
_fn("njct", "vstack", "concat", "xp.concat(arrays, axis=0)",
    "vstack first makes 1-D arrays rows; for 1-D inputs use xp.stack(arrays, axis=0)",
    rewrite="xp.concat({x}, axis=0)", example="lib.vstack([x, y])")
_fn("njct", "column_stack", "stack", "xp.stack(arrays, axis=1)",
    "matches column_stack for 1-D inputs; 2-D inputs need xp.concat(arrays, axis=1)")
for _n in (1, 2, 3):
    _fn("njct", f"atleast_{_n}d", None, f"xpx.atleast_nd(x, ndim={_n})",
        "not in the standard; array-api-extra has atleast_nd (which prepends new axes)")
_fn("njct", "flipud", "flip", "xp.flip(x, axis=0)", "the standard flips with flip(axis=)",
    rewrite="xp.flip({x}, axis=0)", example="lib.flipud(x)")
_fn("njct", "fliplr", "flip", "xp.flip(x, axis=1)", "the standard flips with flip(axis=)",
    rewrite="xp.flip({x}, axis=1)", example="lib.fliplr(x)")
_SLICES = "tuple(x[i:j] for i, j in zip(bounds[:-1], bounds[1:]))"
_fn("njct", "split", None, _SLICES,
    "the standard has no split; slice, or use xp.unstack when every piece has size 1")
_fn("njc", "array_split", None, _SLICES,
    "the standard has no split; slice, or use xp.unstack when every piece has size 1")
_fn("t", "chunk", None, _SLICES, "the standard has no chunk; slice")
_fn("t", "unbind", "unstack", "xp.unstack(x, axis={axis})", _renamed("unstack"))
_fn("t", "broadcast_tensors", "broadcast_arrays", "xp.broadcast_arrays(*arrays)",
    _renamed("broadcast_arrays"))
_fn("t", "repeat_interleave", "repeat", "xp.repeat(x, {arg1}, axis={axis_kw})",
    "the standard spells it repeat (2023.12)")
_fn("njc", "ndim", "ndim", "x.ndim", "the standard has the attribute, not a function")
_fn("nj", "shape", "shape", "x.shape", "the standard has the attribute, not a function")
_fn("njc", "size", "size", "array_api_compat.size(x)",
    "x.size is the standard attribute but may be None for unknown shapes (and is a method "
    "in PyTorch); array_api_compat.size works everywhere")
_fn("t", "numel", "size", "array_api_compat.size(x)",
    "x.size is the standard attribute (a method in PyTorch); array_api_compat.size works "
    "everywhere")

# --- indexing and searching --------------------------------------------------------------

_fn("t", "gather", "take_along_axis", "xp.take_along_axis(x, indices, axis={axis})",
    "the standard spells it take_along_axis (2024.12)")
_fn("t", "index_select", "take", "xp.take(x, indices, axis={axis})", _renamed("take"))
_fn("t", "masked_select", None, "x[mask]", "boolean indexing is standard")
_fn("njct", "argwhere", "nonzero", "xp.stack(xp.nonzero(x), axis=-1)",
    "the standard has nonzero, which returns one index array per axis")
_add("njct", "function", "unique", NS, None, "xp.backend.unique(x, axis={axis})",
     "unique along an axis (unique rows) is not in the standard: xp.unique_values flattens; "
     "keep it through the escape hatch", when="axis_given",
     no_rewrite="the standard has no unique along an axis")
_add("njct", "function", "unique", NS, "unique_counts", "xp.unique_counts(x)",
     "unique with return_counts=True alone is the standard's unique_counts (values, counts); "
     "np.unique sorts, as every installed library's unique_counts does though the standard "
     "does not promise it, and NaNs count apart where np.unique joins them",
     when="counts_only", rewrite="xp.unique_counts({x})", example="lib.unique(i, return_counts=True)")
_add("njct", "function", "unique", NS, "unique_all", "xp.unique_all(x)",
     "return_counts/return_inverse/return_index map to xp.unique_counts, xp.unique_inverse "
     "and xp.unique_all, whose named tuples order their fields differently",
     when="unique_returns",
     no_rewrite="the standard's unique_* functions return named tuples in another order")
_fn("njct", "unique", "unique_values", "xp.sort(xp.unique_values(x))",
    "np.unique sorts its result; xp.unique_values promises no order, so sort it",
    rewrite="xp.sort(xp.unique_values({x}))", example="lib.unique(i)")
_add("t", "function", "topk", NS, "sort", "xp.sort(x, axis=-1, descending=True)[..., :k]",
     "the standard has no topk; sort (values) or argsort (indices) and slice",
     no_rewrite=NO_TUPLE_REWRITE, example="lib.topk(v, 2)",
     parts=(("values", "xp.sort({x}, axis=-1, descending=True)[..., :{arg1}]"),
            ("indices", "xp.argsort({x}, axis=-1, descending=True, stable=True)[..., :{arg1}]")))
_fn("t", "is_tensor", None, "array_api_compat.is_array_api_obj(x)",
    "the standard has no array test; array-api-compat has one for every library")
_fn("t", "is_floating_point", "isdtype", "xp.isdtype(x.dtype, 'real floating')",
    "the standard asks dtype questions with isdtype")
_fn("t", "is_complex", "isdtype", "xp.isdtype(x.dtype, 'complex floating')",
    "the standard asks dtype questions with isdtype")

# --- linear algebra ----------------------------------------------------------------------

_add("njct", "function", "dot", NS, "tensordot",
     "xp.tensordot(a, b, axes=([-1], [-2])) for N-D b, xp.multiply(a, b) for a 0-D operand",
     "dot of an N-D array sums over the last axis of a and the second-to-last of b",
     when="beyond_matrices",
     no_rewrite="dot is matmul only for operands of one or two dimensions; with an "
     "operand of another rank (or not an array) it is tensordot or a product")
_DOT_NOTE = (
    "for 1-D and 2-D operands dot is matmul (two 1-D arrays: their inner product, "
    "xp.vecdot without conjugation); for N-D dot use xp.tensordot"
)
_fn("njc", "dot", "matmul", "xp.matmul(a, b)", _DOT_NOTE, rewrite="xp.matmul({x}, {arg1})",
    example="lib.dot(x, m)")
_fn("t", "dot", "matmul", "xp.matmul(a, b)", _DOT_NOTE + " (torch.dot takes 1-D arrays only)")
for _name in ("mm", "bmm", "mv"):
    _fn("t", _name, "matmul", "xp.matmul(a, b)", _renamed("matmul"))
_fn("njct", "inner", "vecdot", "xp.vecdot(a, b)",
    "matches inner for 1-D arrays; vecdot conjugates its first argument for complex input")
_fn("njct", "outer", "linalg.outer", "xp.linalg.outer(a, b)",
    "outer lives in the linalg extension", rewrite="xp.linalg.outer({x}, {arg1})",
    example="lib.outer(v, v)")
_NORM = "xp.linalg.vector_norm(x, axis={axis_kw}, keepdims={keepdims})"
_fn("njct", "linalg.norm", "linalg.vector_norm", _NORM,
    "the standard splits norm into linalg.vector_norm and linalg.matrix_norm (ord='fro', "
    "'nuc', or a matrix ord over two axes)",
    # without ord: the 2-norm of the elements over the axes (the Frobenius norm of a
    # matrix is that too); an ord is an argument the rewrite would drop, so it refuses
    rewrite="xp.linalg.vector_norm({x}, axis={axis_kw}, keepdims={keepdims})",
    example="lib.linalg.norm(x, axis=1)")
_fn("t", "norm", "linalg.vector_norm", _NORM,
    "the standard splits norm into linalg.vector_norm and linalg.matrix_norm")
_fn("njct", "trace", "linalg.trace", "xp.linalg.trace(x)",
    "NumPy's trace uses the first two axes, the standard's linalg.trace the last two")
_add("njct", "function", "diagonal", NS, None,
     "xp.linalg.diagonal(xp.permute_dims(x, ...), offset={k})",
     "NumPy's and torch's diagonal use the first two axes (or dim1/dim2), the standard's "
     "linalg.diagonal the last two", when="not_matrix_diagonal",
     no_rewrite="diagonal of an array that is not 2-D (or over chosen axes) needs its axes "
     "moved last first: permute_dims, then linalg.diagonal")
_fn("njct", "diagonal", "linalg.diagonal", "xp.linalg.diagonal(x, offset={k})",
    "for a 2-D array the first two axes are the last two: linalg.diagonal, offset as the "
    "keyword", rewrite="xp.linalg.diagonal({x}, offset={k})", example="lib.diagonal(m, 1)")
_add("njct", "function", "diag", NS, None,
     "xp.linalg.diagonal(x, offset={k}) for a 2-D x, xpx.create_diagonal(x, offset={k}) for 1-D",
     "diag reads the k-th diagonal of a 2-D array and builds a matrix from a 1-D one",
     when="diag_offset",
     no_rewrite="which standard call diag is depends on the rank of x, which the call does not show")
_fn("njct", "diag", None, "xpx.create_diagonal(x)",
    "builds a diagonal matrix from a 1-D array (array-api-extra); to read the diagonal of "
    "a 2-D array use xp.linalg.diagonal(x)")
_fn("t", "det", "linalg.det", "xp.linalg.det(x)", "det lives in the linalg extension")
_fn("t", "inverse", "linalg.inv", "xp.linalg.inv(x)", "the standard spells it linalg.inv")
_fn("t", "svd", "linalg.svd", "xp.linalg.svd(x, full_matrices=False)",
    "torch.svd returns V where linalg.svd returns Vh (its conjugate transpose)")
_fn("njct", "einsum", None, "xp.backend.einsum(subscripts, *operands)",
    "the standard has no einsum; rewrite with matmul/tensordot/vecdot, or keep it through "
    "the escape hatch to mark it as acknowledged")
_fn("njct", "kron", None, "xpx.kron(a, b)", "not in the standard; array-api-extra has kron")

# --- statistics and comparison -----------------------------------------------------------

for _name, _std in (("amax", "max"), ("amin", "min")):
    _fn("njct", _name, _std, f"xp.{_std}(x, axis={{axis}}, keepdims={{keepdims}})",
        _renamed(_std), rewrite=f"xp.{_std}({{x}}, axis={{axis}}, keepdims={{keepdims}})",
        example=f"lib.{_name}(x, 1)")
_fn("njct", "cumsum", "cumulative_sum", "xp.cumulative_sum(x, axis={axis})",
    "cumulative_sum (2023.12) needs axis= for arrays with more than one dimension, where "
    "NumPy flattens", rewrite="xp.cumulative_sum({x}, axis={axis})",
    example="lib.cumsum(x, 1)")
_fn("njct", "cumprod", "cumulative_prod", "xp.cumulative_prod(x, axis={axis})",
    "cumulative_prod (2024.12) needs axis= for arrays with more than one dimension, where "
    "NumPy flattens", rewrite="xp.cumulative_prod({x}, axis={axis})",
    example="lib.cumprod(x, 1)")
_fn("njc", "ptp", "max", "xp.max(x, axis={axis}) - xp.min(x, axis={axis})",
    "the standard has no ptp")
_fn("njc", "average", "mean", "xp.mean(x, axis={axis})",
    "with weights: xp.sum(x * w, axis=...) / xp.sum(w, axis=...)")
_fn("njct", "median", None, "xp.backend.median(x)",
    "the standard has no median (nor quantile); keep it through the escape hatch",
    no_rewrite="the standard has no median: the nearest portable form sorts along the axis "
    "(xp.sort) and takes the middle element, or the mean of the two middle ones for an "
    "even length; torch's median takes the lower one instead, so no one rewrite holds")
for _name, _libs in [("nansum", "njct"), ("nanmean", "njct"), ("nanmax", "njc"),
                     ("nanmin", "njc"), ("nan_to_num", "njct")]:
    _fn(_libs, _name, None, f"xpx.{_name}(x)", f"not in the standard; array-api-extra has {_name}")
_fn("njct", "cov", None, "xpx.cov(m)", "not in the standard; array-api-extra has cov")
_fn("njct", "isclose", None, "xpx.isclose(a, b)",
    "not in the standard; array-api-extra has isclose (rtol/atol as in NumPy)")
_fn("njct", "allclose", None, "bool(xp.all(xpx.isclose(a, b)))",
    "not in the standard; array-api-extra has isclose (a host sync through bool)")
_fn("njc", "array_equal", None, "a.shape == b.shape and bool(xp.all(a == b))",
    "not in the standard (a host sync through bool)")
_fn("t", "equal", None, "a.shape == b.shape and bool(xp.all(a == b))",
    "torch.equal compares whole tensors; the standard's equal is element-wise")
for _name, _std, _libs in [
    ("deg2rad", "deg2rad", "njct"), ("radians", "deg2rad", "njc"),
    ("rad2deg", "rad2deg", "njct"), ("degrees", "rad2deg", "njc"),
    ("sinc", "sinc", "njct"), ("angle", "angle", "njct"),
]:
    _fn(_libs, _name, None, f"xpx.{_std}(x)", f"not in the standard; array-api-extra has {_std}")
for _name in ("setdiff1d", "union1d"):
    _fn("nj", _name, None, f"xpx.{_name}(x1, x2)",
        f"not in the standard; array-api-extra has {_name}")
_fn("njc", "pad", None, "xpx.pad(x, pad_width)", "not in the standard; array-api-extra has pad")
_fn("njc", "fill_diagonal", None,
    "x = xp.where(xp.eye(*x.shape, dtype=xp.bool, device=x.device), value, x)",
    "fill_diagonal writes in place, which standard arrays need not allow")

# --- neural-network helpers --------------------------------------------------------------

_SOFTMAX = (
    "e = xp.exp(x - xp.max(x, axis={axis}, keepdims=True)); "
    "e / xp.sum(e, axis={axis}, keepdims=True)"
)
_SIGMOID = "1 / (1 + xp.exp(-x))"
_RELU_NOTE = "Python scalars in maximum need 2024.12; before, use xp.zeros_like(x)"
for _libs, _name in [("t", "softmax"), ("t", "nn.functional.softmax"), ("j", "nn.softmax")]:
    _fn(_libs, _name, None, _SOFTMAX, "the standard has no softmax")
for _libs, _name in [("t", "sigmoid"), ("t", "special.expit"), ("j", "nn.sigmoid")]:
    _fn(_libs, _name, None, _SIGMOID, "the standard has no sigmoid",
        rewrite="1 / (1 + xp.exp(-{x}))", example=f"lib.{_name}(x)")
for _libs, _name in [("t", "relu"), ("t", "nn.functional.relu"), ("j", "nn.relu")]:
    _fn(_libs, _name, "maximum", "xp.maximum(x, 0)", _RELU_NOTE,
        rewrite="xp.maximum({x}, 0.0)", example=f"lib.{_name}(x)")
for _libs, _name in [("t", "nn.functional.one_hot"), ("j", "nn.one_hot")]:
    _fn(_libs, _name, None, "xpx.one_hot(x, num_classes)",
        "not in the standard; array-api-extra has one_hot")
_fn("t", "nn.functional.pad", None, "xpx.pad(x, pad_width)",
    "array-api-extra has pad; torch lists the padding from the last axis backwards")
for _name in ("no_grad", "inference_mode"):
    _fn("t", _name, None,
        f"torch.{_name}() if array_api_compat.is_torch_namespace(xp) else contextlib.nullcontext()",
        "autograd is outside the standard; keep the context manager for PyTorch only")

# --- random numbers ----------------------------------------------------------------------

_RANDOM_NOTE = (
    "the standard has no random numbers: draw on the host with rng = "
    "np.random.default_rng(seed) and move them with xp.asarray(..., device=device)"
)
_SEED = "rng = np.random.default_rng(seed)"
_NORMAL = "xp.asarray(rng.standard_normal(shape), device=device)"
_UNIFORM = "xp.asarray(rng.random(shape), device=device)"
_NP_UNIFORM = "xp.asarray(rng.uniform(low, high, size), device=device)"
_JAX_UNIFORM = "xp.asarray(rng.uniform(minval, maxval, shape), device=device)"
_NP_NORMAL = "xp.asarray(rng.normal(loc, scale, size), device=device)"
_INTEGERS = "xp.asarray(rng.integers(low, high, shape), device=device)"
_PERMUTATION = "xp.asarray(rng.permutation(n), device=device)"
for _libs, _name, _suggestion in [
    ("nc", "random.rand", _UNIFORM), ("nc", "random.randn", _NORMAL),
    ("nc", "random.random", _UNIFORM), ("nc", "random.normal", _NP_NORMAL),
    ("j", "random.normal", _NORMAL), ("nc", "random.uniform", _NP_UNIFORM),
    ("j", "random.uniform", _JAX_UNIFORM), ("nc", "random.randint", _INTEGERS),
    ("nc", "random.seed", _SEED),
    ("ncj", "random.permutation", _PERMUTATION),
    ("ncj", "random.choice", "xp.asarray(rng.choice(a, size), device=device)"),
    ("j", "random.key", _SEED), ("j", "random.PRNGKey", _SEED),
    ("t", "rand", _UNIFORM), ("t", "randn", _NORMAL), ("t", "randint", _INTEGERS),
    ("t", "randperm", _PERMUTATION), ("t", "manual_seed", _SEED),
    ("t", "normal", "xp.asarray(rng.normal(mean, std, size), device=device)"),
    ("t", "rand_like", "xp.asarray(rng.random(x.shape), dtype=x.dtype, device=x.device)"),
    ("t", "randn_like",
     "xp.asarray(rng.standard_normal(x.shape), dtype=x.dtype, device=x.device)"),
]:
    _fn(_libs, _name, None, _suggestion, _RANDOM_NOTE,
        no_rewrite=NO_SEED_REWRITE if _suggestion == _SEED else NO_RANDOM_REWRITE)
# the generator the notes above advise: outside the standard's namespace, and the way to draw
_add("n", "function", "random.default_rng", "outside_namespace", None, _UNIFORM,
     "NumPy's host generator, as porter advises for random numbers: the standard has none, "
     "so draw on the host and move the draws with xp.asarray(..., device=device)",
     no_rewrite="nothing to rewrite: it is the portable way to draw random numbers")

# --- standard names used the non-standard way --------------------------------------------

_PAIR_NOTE = (
    "torch.{name}(a, b) is element-wise; the standard's {name} reduces one array and "
    "{pair} compares two"
)
_TUPLE_NOTE = (
    "torch returns (values, indices) here; xp.{name} gives the values and xp.arg{name} "
    "the indices"
)
for _name, _pair in (("max", "maximum"), ("min", "minimum")):
    for _kind, _status, _two, _rewrite, _example in (
        ("function", USAGE, "xp.{pair}(a, b)", "xp.{pair}({{arg0}}, {{arg1}})", "lib.{name}(x, y)"),
        ("method", NS, "xp.{pair}(x, other)", "xp.{pair}({{x}}, {{arg0}})", "x.{name}(y)"),
    ):
        _add("t", _kind, _name, _status, _pair, _two.format(pair=_pair),
             _PAIR_NOTE.format(name=_name, pair=_pair), when="two_arrays",
             rewrite=_rewrite.format(pair=_pair), example=_example.format(name=_name))
        for _when, _axis in (("positional_axis", "1"), ("dim_keyword", "dim=1, keepdim=True")):
            _values = f"xp.{_name}({{x}}, axis={{axis}}, keepdims={{keepdims}})"
            _add("t", _kind, _name, _status, _name,
                 f"(xp.{_name}(x, axis={{axis}}, keepdims={{keepdims}}), "
                 f"xp.arg{_name}(x, axis={{axis}}, keepdims={{keepdims}}))",
                 _TUPLE_NOTE.format(name=_name), when=_when, no_rewrite=NO_TUPLE_REWRITE,
                 parts=(("values", _values), ("indices", _values.replace("xp.", "xp.arg", 1))),
                 example=f"lib.{_name}(x, {_axis})" if _kind == "function"
                 else f"x.{_name}({_axis})")

_CORRECTION_NOTE = (
    "torch's {name} divides by N - 1 by default (correction=1), the standard's by N "
    "(correction=0): pass correction= to keep the numbers"
)
for _name in ("std", "var"):
    _default = f"xp.{_name}(x, axis={{axis}}, correction=1, keepdims={{keepdims}})"
    _explicit = f"xp.{_name}(x, axis={{axis}}, correction={{correction}}, keepdims={{keepdims}})"
    _note = _CORRECTION_NOTE.format(name=_name)
    _add("t", "function", _name, USAGE, _name, _default, _note, when="default_correction")
    _add("t", "function", _name, USAGE, _name, _explicit,
         "the standard spells unbiased= as correction= (1 or 0)", when="unbiased_keyword")
    _add("t", "method", _name, NS, _name, _default, _note, when="default_correction",
         rewrite=_default.replace("(x,", "({x},"), example=f"x.{_name}(1)")
    _add("*", "function", _name, USAGE, _name, _explicit,
         "the standard spells ddof= as correction=", when="ddof_keyword")

_SORT_PARTS = (("values", "xp.sort({x}, axis={axis}, descending={descending})"),
               ("indices", "xp.argsort({x}, axis={axis}, descending={descending})"))
_add("t", "function", "sort", USAGE, "sort",
     "(xp.sort(x, axis={axis}), xp.argsort(x, axis={axis}))",
     "torch.sort returns (values, indices); the standard's sort returns the values and "
     "argsort the indices", no_rewrite=NO_TUPLE_REWRITE, parts=_SORT_PARTS,
     example="lib.sort(x, descending=True)")

_AXIS_NOTE = "the standard takes axis as a keyword argument"
_DIM_NOTE = "the standard spells dim= as axis= and keepdim= as keepdims="
for _name in ("sum", "prod", "mean", "std", "var", "max", "min", "any", "all", "argmax",
              "argmin", "count_nonzero"):
    _template = f"xp.{_name}(x, axis={{axis}}, keepdims={{keepdims}})"
    _rewrite = f"xp.{_name}({{x}}, axis={{axis}}, keepdims={{keepdims}})"
    _input = "b" if _name in ("any", "all") else "x"
    _add("*", "function", _name, USAGE, _name, _template, _AXIS_NOTE, when="positional_axis",
         rewrite=_rewrite, example=f"lib.{_name}({_input}, 1)")
    if _name in ("max", "min", "std", "var"):  # torch's own entries take these with dim=
        _add("*", "function", _name, USAGE, _name, _template, _DIM_NOTE, when="dim_keyword")
    else:
        _add("*", "function", _name, USAGE, _name, _template, _DIM_NOTE, when="dim_keyword",
             rewrite=_rewrite, example=f"lib.{_name}({_input}, dim=1)")
for _name, _template in [
    ("concat", "xp.concat(arrays, axis={axis})"), ("stack", "xp.stack(arrays, axis={axis})"),
    ("flip", "xp.flip(x, axis={axis})"), ("sort", "xp.sort(x, axis={axis})"),
    ("argsort", "xp.argsort(x, axis={axis})"),
]:
    _rewrite = _template.replace("(x,", "({x},").replace("(arrays,", "({x},")
    _input = "[x, y]" if _name in ("concat", "stack") else "x"
    _add("*", "function", _name, USAGE, _name, _template, _AXIS_NOTE, when="positional_axis",
         rewrite=_rewrite, example=f"lib.{_name}({_input}, 1)")
    if _name == "sort":  # torch's own entry: torch.sort returns (values, indices)
        _add("*", "function", _name, USAGE, _name, _template, _DIM_NOTE, when="dim_keyword")
        continue
    _dim = "dims=(1,)" if _name == "flip" else "dim=1"
    _add("*", "function", _name, USAGE, _name, _template, _DIM_NOTE, when="dim_keyword",
         rewrite=_rewrite, example=f"lib.{_name}({_input}, {_dim})")
_add("*", "function", "roll", USAGE, "roll", "xp.roll(x, {arg1}, axis={axis_kw})", _DIM_NOTE,
     when="dim_keyword")
_add("*", "function", "squeeze", USAGE, "squeeze", "xp.squeeze(x, axis=...)",
     "the standard's squeeze needs the axis to remove", when="no_axis")
_add("*", "function", "squeeze", USAGE, "squeeze", "xp.squeeze(x, axis={axis})", _DIM_NOTE,
     when="dim_keyword")
_add("*", "function", "linalg.vector_norm", USAGE, "linalg.vector_norm", _NORM, _DIM_NOTE,
     when="dim_keyword")
_add("*", "function", "where", USAGE, "nonzero", "xp.nonzero(condition)",
     "one-argument where is nonzero; the standard's where always takes three",
     when="single_arg", rewrite="xp.nonzero({x})", example="lib.where(b)")
_add("*", "function", "round", USAGE, "round",
     "xp.round(x * 10.0**{decimals}) / 10.0**{decimals}",
     "the standard's round has no decimals", when="round_decimals",
     rewrite="xp.round({x} * 10.0**{decimals}) / 10.0**{decimals}", example="lib.round(x, 1)")
_add("*", "function", "clip", USAGE, "clip", "xp.clip(x, min={min}, max={max})",
     "the standard spells a_min/a_max as min/max", when="a_min_keyword",
     rewrite="xp.clip({x}, min={min}, max={max})", example="lib.clip(x, a_min=0.0, a_max=1.0)")

# --- methods: the standard array has none beyond dunders, to_device and __dlpack__ --------

_METHOD_NOTE = "array methods are not in the standard; call the namespace function"
for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin"):
    _method("*", _name, _name, f"xp.{_name}(x, axis={{axis}}, keepdims={{keepdims}})",
            _METHOD_NOTE, rewrite=f"xp.{_name}({{x}}, axis={{axis}}, keepdims={{keepdims}})",
            example=f"{'b' if _name in ('any', 'all') else 'x'}.{_name}(1)")
for _name in ("std", "var"):
    _method("*", _name, _name,
            f"xp.{_name}(x, axis={{axis}}, correction={{correction}}, keepdims={{keepdims}})",
            _METHOD_NOTE + "; NumPy's ddof= is the standard's correction=",
            rewrite=f"xp.{_name}({{x}}, axis={{axis}}, correction={{correction}}, "
                    "keepdims={keepdims})",
            example=f"x.{_name}(1, ddof=1)")
_method("*", "cumsum", "cumulative_sum", "xp.cumulative_sum(x, axis={axis})", _METHOD_NOTE,
        rewrite="xp.cumulative_sum({x}, axis={axis})", example="x.cumsum(1)")
_method("*", "cumprod", "cumulative_prod", "xp.cumulative_prod(x, axis={axis})", _METHOD_NOTE,
        rewrite="xp.cumulative_prod({x}, axis={axis})", example="x.cumprod(1)")
_method("*", "argsort", "argsort", "xp.argsort(x, axis={axis})", _METHOD_NOTE,
        rewrite="xp.argsort({x}, axis={axis})", example="x.argsort(1)")
_method("nc", "sort", "sort", "x = xp.sort(x, axis={axis})",
        "NumPy's x.sort() sorts x in place and returns None: rebind the name to xp.sort(x)",
        rewrite="{x} = xp.sort({x}, axis={axis})", example="v.sort()")
_method("t", "sort", "sort", "(xp.sort(x, axis={axis}), xp.argsort(x, axis={axis}))",
        "torch's x.sort() returns (values, indices): xp.sort gives the values, xp.argsort "
        "the indices", no_rewrite=NO_TUPLE_REWRITE, parts=_SORT_PARTS,
        example="x.sort(dim=0, descending=True)")
_method("j", "sort", "sort", "xp.sort(x, axis={axis})", _METHOD_NOTE,
        rewrite="xp.sort({x}, axis={axis})", example="v.sort()")
_method("*", "sort", "sort", "xp.sort(x, axis={axis})",
        "NumPy's x.sort() sorts in place and returns None, torch's returns (values, indices); "
        "xp.sort returns the sorted values")
_method("*", "nonzero", "nonzero", "xp.nonzero(x)",
        "xp.nonzero returns a tuple of index arrays (torch's method returns one 2-D tensor)")

_CONJ_VIEW = (
    "NumPy's x.conj() of a real array returns a view of x, xp.conj a copy: a write through "
    "the result would no longer reach x"
)
for _name, _std in [
    ("abs", "abs"), ("exp", "exp"), ("log", "log"), ("sqrt", "sqrt"), ("sin", "sin"),
    ("cos", "cos"), ("tan", "tan"), ("tanh", "tanh"), ("sinh", "sinh"), ("cosh", "cosh"),
    ("asin", "asin"), ("acos", "acos"), ("atan", "atan"), ("floor", "floor"),
    ("ceil", "ceil"), ("trunc", "trunc"), ("sign", "sign"), ("log1p", "log1p"),
    ("expm1", "expm1"), ("log2", "log2"), ("log10", "log10"), ("square", "square"),
    ("reciprocal", "reciprocal"), ("neg", "negative"), ("negative", "negative"),
    ("conj", "conj"), ("conjugate", "conj"), ("isnan", "isnan"), ("isinf", "isinf"),
    ("isfinite", "isfinite"), ("logical_not", "logical_not"),
]:
    if _std == "conj":  # x.conj() of a real array is x itself in NumPy, a copy in xp.conj
        _method("*", _name, _std, "xp.conj(x)", _METHOD_NOTE, no_rewrite=_CONJ_VIEW)
        continue
    _method("*", _name, _std, f"xp.{_std}(x)", _METHOD_NOTE, rewrite=f"xp.{_std}({{x}})",
            example=f"{'b' if _name == 'logical_not' else 'p'}.{_name}()")
_method("t", "conj", "conj", "xp.conj(x)", _METHOD_NOTE, rewrite="xp.conj({x})",
        example="p.conj()")
_add("*", "method", "round", NS, "round", "xp.round(x * 10.0**{decimals}) / 10.0**{decimals}",
     _METHOD_NOTE + "; the standard's round has no decimals: scale, round, scale back",
     when="round_decimals", rewrite="xp.round({x} * 10.0**{decimals}) / 10.0**{decimals}",
     example="x.round(1)")
_method("*", "round", "round", "xp.round(x)",
        _METHOD_NOTE + "; the standard's round has no decimals", rewrite="xp.round({x})",
        example="x.round()")
_method("*", "clip", "clip", "xp.clip(x, min={min}, max={max})", _METHOD_NOTE,
        rewrite="xp.clip({x}, min={min}, max={max})", example="x.clip(0.0, 1.0)")
_method("t", "clamp", "clip", "xp.clip(x, min={min}, max={max})", _renamed("xp.clip"),
        rewrite="xp.clip({x}, min={min}, max={max})", example="x.clamp(0.0, 1.0)")
_add("*", "method", "exp2", NS, "pow", "2.0 ** x", _EXP2_NOTE,
     when="real_floating", rewrite="2.0 ** {x}", example="x.exp2()")
_method("*", "exp2", None, "xp.backend.exp2(x)",
        "the standard has no exp2; keep it through the escape hatch xp.backend.exp2(x)",
        no_rewrite=_EXP2_CAST)
_method("t", "sigmoid", None, _SIGMOID, "the standard has no sigmoid")
_method("t", "relu", "maximum", "xp.maximum(x, 0)", _RELU_NOTE)
_method("t", "softmax", None, _SOFTMAX, "the standard has no softmax")

for _name, _std in [
    ("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("div", "divide"),
    ("pow", "pow"), ("maximum", "maximum"), ("minimum", "minimum"),
    ("remainder", "remainder"), ("eq", "equal"), ("ne", "not_equal"), ("gt", "greater"),
    ("ge", "greater_equal"), ("lt", "less"), ("le", "less_equal"),
]:
    _method("t", _name, _std, f"xp.{_std}(x, {{arg0}})", _METHOD_NOTE,
            rewrite=f"xp.{_std}({{x}}, {{arg0}})", example=f"p.{_name}(q)")
for _libs, _name in (("t", "matmul"), ("t", "mm"), ("*", "dot")):
    _method(_libs, _name, "matmul", "xp.matmul(x, y)",
            _METHOD_NOTE + "; for two 1-D arrays use xp.vecdot",
            rewrite="xp.matmul({x}, {arg0})", example=f"x.{_name}(m)")

_INPLACE_NOTE = (
    "in-place methods are outside the standard (JAX arrays are immutable): compute the "
    "new array and rebind the name"
)
for _name, _std, _suggestion in [
    ("add_", "add", "x = xp.add(x, {arg0})"),
    ("sub_", "subtract", "x = xp.subtract(x, {arg0})"),
    ("mul_", "multiply", "x = xp.multiply(x, {arg0})"),
    ("div_", "divide", "x = xp.divide(x, {arg0})"),
    ("clamp_", "clip", "x = xp.clip(x, min={min}, max={max})"),
    ("zero_", "zeros_like", "x = xp.zeros_like(x)"),
    ("fill_", "full_like", "x = xp.full_like(x, {arg0})"),
]:
    _example = {"clamp_": "x.clamp_(0.0, 1.0)", "zero_": "x.zero_()",
                "fill_": "x.fill_(2.0)"}.get(_name, f"x.{_name}(y)")
    _method("t", _name, _std, _suggestion, _INPLACE_NOTE,
            rewrite=_suggestion.replace("x = ", "{x} = ", 1).replace("(x", "({x}"),
            example=_example)
_method("nc", "fill", "full_like", "x = xp.full_like(x, {arg0})", _INPLACE_NOTE,
        rewrite="{x} = xp.full_like({x}, {arg0})", example="x.fill(2.0)")

_method("*", "reshape", "reshape", "xp.reshape(x, {shape})", _METHOD_NOTE,
        rewrite="xp.reshape({x}, {shape})", example="x.reshape(3, 2)")
_method("t", "view", "reshape", "xp.reshape(x, {shape})",
        "view never copies; xp.reshape(x, shape, copy=False) fails where a view is impossible",
        rewrite="xp.reshape({x}, {shape})", example="x.view(3, 2)")
_method("t", "view_as", "reshape", "xp.reshape(x, y.shape)", _METHOD_NOTE)
# NumPy's flatten always copies (a write to its result leaves x alone) where reshape and
# ravel give a view when they can: the copy is kept. torch's flatten is a view where it can be.
_method("t", "flatten", "reshape", "xp.reshape(x, (-1,))", _METHOD_NOTE,
        rewrite="xp.reshape({x}, (-1,))", example="x.flatten()")
_method("*", "flatten", "reshape", "xp.reshape(xp.asarray(x, copy=True), (-1,))",
        _METHOD_NOTE + "; flatten copies, reshape may return a view: the copy keeps later "
        "writes to the result off x", rewrite="xp.reshape(xp.asarray({x}, copy=True), (-1,))",
        example="x.flatten()")
_method("*", "ravel", "reshape", "xp.reshape(x, (-1,))", _METHOD_NOTE,
        rewrite="xp.reshape({x}, (-1,))", example="x.ravel()")
_method("t", "transpose", "permute_dims", "xp.permute_dims(x, axes)",
        "torch's x.transpose(i, j) exchanges two axes: pass all axes with those two "
        "exchanged, or use xp.matrix_transpose(x) for the last two")
_method("*", "transpose", "permute_dims", "xp.permute_dims(x, {axes})",
        _METHOD_NOTE + "; x.transpose() reverses all axes")
_method("*", "swapaxes", "permute_dims", "xp.permute_dims(x, axes)",
        "pass all axes with the two exchanged")
_method("t", "permute", "permute_dims", "xp.permute_dims(x, {axes})", _METHOD_NOTE)
_method("t", "t", "matrix_transpose", "xp.matrix_transpose(x)", _METHOD_NOTE)
_method("*", "squeeze", "squeeze", "xp.squeeze(x, {axis})",
        _METHOD_NOTE + "; the standard's squeeze needs the axis to remove")
_method("t", "unsqueeze", "expand_dims", "xp.expand_dims(x, axis={axis})", _METHOD_NOTE,
        rewrite="xp.expand_dims({x}, axis={axis})", example="x.unsqueeze(0)")
_method("t", "expand", "broadcast_to", "xp.broadcast_to(x, {shape})", _METHOD_NOTE)
_method("t", "expand_as", "broadcast_to", "xp.broadcast_to(x, y.shape)", _METHOD_NOTE)
_method("t", "repeat", "tile", "xp.tile(x, {shape})",
        "torch's x.repeat(...) tiles the whole tensor: that is xp.tile")
_method("*", "repeat", "repeat", "xp.repeat(x, {arg0}, axis={axis_kw})", _METHOD_NOTE)
_method("t", "repeat_interleave", "repeat", "xp.repeat(x, {arg0}, axis={axis_kw})",
        "the standard spells it repeat (2023.12)")
_method("*", "flip", "flip", "xp.flip(x, axis={axis})", _METHOD_NOTE,
        rewrite="xp.flip({x}, axis={axis})", example="x.flip(1)")
_method("*", "take", "take", "xp.take(x, indices, axis={axis_kw})", _METHOD_NOTE)
_method("t", "gather", "take_along_axis", "xp.take_along_axis(x, indices, axis={axis})",
        "the standard spells it take_along_axis (2024.12)")
_method("t", "index_select", "take", "xp.take(x, indices, axis={axis})", _METHOD_NOTE)
_method("t", "masked_fill", "where", "xp.where(mask, {arg1}, x)", _METHOD_NOTE)
_method("t", "unbind", "unstack", "xp.unstack(x, axis={axis})", _METHOD_NOTE)
_method("*", "diagonal", "linalg.diagonal", "xp.linalg.diagonal(x)",
        "NumPy's diagonal uses the first two axes, the standard's linalg.diagonal the last two")
_method("*", "trace", "linalg.trace", "xp.linalg.trace(x)",
        "NumPy's trace uses the first two axes, the standard's linalg.trace the last two")
_method("t", "norm", "linalg.vector_norm", _NORM,
        "the standard splits norm into linalg.vector_norm and linalg.matrix_norm")

_method("*", "astype", "astype", "xp.astype(x, {dtype})",
        "the standard has the function xp.astype, not the method",
        rewrite="xp.astype({x}, {dtype}, copy={copy})", example="x.astype(int)")
# torch's casts return x itself when it has the dtype already: copy=False says the same
_add("t", "method", "type", NS, "astype", "xp.astype(x, {dtype}, copy=False)",
     "a dtype cast is xp.astype in the standard", when="dtype_arg",
     rewrite="xp.astype({x}, {dtype}, copy=False)", example="x.type(lib.float32)")
_method("t", "type", "dtype", "x.dtype", "the standard array carries its dtype in x.dtype")
_method("t", "type_as", "astype", "xp.astype(x, y.dtype)", _METHOD_NOTE)
for _name, _dtype in [("float", "float32"), ("double", "float64"), ("half", "float16"),
                      ("int", "int32"), ("long", "int64"), ("bool", "bool")]:
    _note = "a dtype cast is xp.astype in the standard"
    if _dtype == "float16":
        _note += "; float16 is not one of the standard's dtypes"
    if _dtype == "float16":  # not a standard dtype: no library-independent rewrite
        _method("t", _name, "astype", f"xp.astype(x, xp.{_dtype})", _note)
        continue
    _method("t", _name, "astype", f"xp.astype(x, xp.{_dtype}, copy=False)", _note,
            rewrite=f"xp.astype({{x}}, xp.{_dtype}, copy=False)", example=f"x.{_name}()")

_method("*", "copy", "asarray", "xp.asarray(x, copy=True)", _METHOD_NOTE,
        rewrite="xp.asarray({x}, copy=True)", example="x.copy()")
_method("t", "clone", "asarray", "xp.asarray(x, copy=True)", _METHOD_NOTE,
        rewrite="xp.asarray({x}, copy=True)", example="x.clone()")
_method("t", "contiguous", None, "x",
        "memory layout is not part of the standard; drop it (xp.asarray(x, copy=True) when "
        "a fresh buffer is the point)")
_method("t", "detach", None, "x",
        "autograd is outside the standard; detach where tensors enter the array-API code")
for _name, _std, _template in [
    ("new_zeros", "zeros", "xp.zeros({shape}, dtype=x.dtype, device=x.device)"),
    ("new_ones", "ones", "xp.ones({shape}, dtype=x.dtype, device=x.device)"),
    ("new_empty", "empty", "xp.empty({shape}, dtype=x.dtype, device=x.device)"),
    ("new_full", "full", "xp.full({arg0}, {arg1}, dtype=x.dtype, device=x.device)"),
    ("new_tensor", "asarray", "xp.asarray(data, dtype=x.dtype, device=x.device)"),
]:
    _rewrite = None if _name in ("new_tensor", "new_empty") else (
        _template.replace("x.", "{x}.")
    )  # an empty array's values, a new tensor's data: nothing to compare
    _method("t", _name, _std, _template, _METHOD_NOTE + "; take dtype and device from x",
            **({"rewrite": _rewrite, "example": "x.new_full((2, 2), 1.5)" if _name == "new_full"
                else f"x.{_name}((2, 2))"} if _rewrite else {}))
_method("t", "is_floating_point", "isdtype", "xp.isdtype(x.dtype, 'real floating')",
        _METHOD_NOTE)
_method("t", "is_complex", "isdtype", "xp.isdtype(x.dtype, 'complex floating')", _METHOD_NOTE)
_add("t", "method", "size", NS, "shape", "x.shape[{arg0}]",
     "the standard's x.size is the element count; one axis's length is x.shape[axis]",
     when="single_arg", rewrite="{x}.shape[{arg0}]", example="x.size(1)")
_method("t", "size", "shape", "x.shape", "the standard's x.size is the element count",
        rewrite="{x}.shape", example="x.size()")
_method("t", "dim", "ndim", "x.ndim", "the standard spells it x.ndim", rewrite="{x}.ndim",
        example="x.dim()")
_method("t", "ndimension", "ndim", "x.ndim", "the standard spells it x.ndim")
for _name in ("numel", "nelement"):
    _method("t", _name, "size", "array_api_compat.size(x)",
            "the standard's x.size is the element count but may be None (and is a method in "
            "PyTorch); array_api_compat.size works everywhere")

# --- attributes --------------------------------------------------------------------------

_add("*", "attribute", "T", USAGE, "permute_dims", "xp.permute_dims(x, {reversed_axes})",
     "the standard defines x.T for 2-D arrays only; use x.mT to transpose the last two axes "
     "of a stack of matrices", when="ndim_not_2",
     rewrite="xp.permute_dims({x}, tuple(range({x}.ndim - 1, -1, -1)))", example="v.T")
_add("*", "attribute", "real", NS, "real", "xp.real(x)",
     "the standard has the function xp.real, not the attribute")
_add("*", "attribute", "imag", NS, "imag", "xp.imag(x)",
     "the standard has the function xp.imag, not the attribute")
for _name in ("H", "mH"):
    _add("t", "attribute", _name, NS, "conj", "xp.conj(x.mT)",
         "the standard spells a conjugate transpose of the last two axes xp.conj(x.mT)")
_add("n", "attribute", "flat", NS, "reshape", "xp.reshape(x, (-1,))",
     "the standard has no flat iterator")
_add("j", "attribute", "at", NS, None, "xpx.at(x, idx).set(value)",
     "array-api-extra's at gives functional updates on every library (.set, .add, "
     ".multiply, .divide, .power, .min, .max)")

# --- ufunc methods (np.add.reduce): named "<ufunc>.<method>" -----------------------------
_UFUNC_NOTE = "ufunc methods are NumPy's; the standard spells the reduction as a function"
for _name, _std in [("add.reduce", "sum"), ("multiply.reduce", "prod"),
                    ("maximum.reduce", "max"), ("minimum.reduce", "min"),
                    ("logical_and.reduce", "all"), ("logical_or.reduce", "any")]:
    _fn("nj", _name, _std, f"xp.{_std}(x, axis={{axis}})", _UFUNC_NOTE)
_fn("nj", "add.accumulate", "cumulative_sum", "xp.cumulative_sum(x, axis={axis})", _UFUNC_NOTE)
_fn("nj", "multiply.accumulate", "cumulative_prod", "xp.cumulative_prod(x, axis={axis})",
    _UFUNC_NOTE)
for _name in ("add.outer", "multiply.outer", "subtract.outer"):
    _fn("nj", _name, None, f"xp.{_name.split('.')[0]}(a[:, None], b[None, :])",
        "an outer operation is the elementwise function on broadcast operands")
_fn("n", "add.at", None, "xp.backend.add.at(x, idx, value)",
    "np.add.at adds once per occurrence of a repeated index; xpx.at(x, idx).add(value) and "
    "x[idx] += value add once per distinct index, so no portable spelling keeps repeated "
    "indices: keep it through the escape hatch (or count with a one-hot sum)")

# fmt: on

ENTRIES: tuple[Replacement, ...] = tuple(_entries)
