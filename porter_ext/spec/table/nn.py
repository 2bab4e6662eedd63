"""Neural-network helpers: softmax, sigmoid, relu, one_hot and autograd's context
managers, none of which the standard has.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NS, Chapter

chapter = Chapter()

#: the standard forms of these helpers, the functions' here and the methods' in
#: `math_methods`
SOFTMAX = (
    "e = xp.exp(x - xp.max(x, axis={axis}, keepdims=True)); "
    "e / xp.sum(e, axis={axis}, keepdims=True)"
)
SIGMOID = "1 / (1 + xp.exp(-x))"
#: softmax written out over the axis the call names (the largest value subtracted, as
#: the libraries do, so that exp cannot overflow); the operand is read four times
SOFTMAX_REWRITE = (
    "xp.exp({x} - xp.max({x}, axis={axis}, keepdims=True)) / "
    "xp.sum(xp.exp({x} - xp.max({x}, axis={axis}, keepdims=True)), axis={axis}, keepdims=True)"
)
RELU_NOTE = "Python scalars in maximum need 2024.12; before, use xp.zeros_like(x)"
for _libs, _name, _example in [
    ("t", "softmax", "lib.softmax(x, dim=1)"),
    ("t", "nn.functional.softmax", "lib.nn.functional.softmax(x, dim=-1)"),
    ("j", "nn.softmax", "lib.nn.softmax(x, axis=0)"),
]:
    chapter.function(
        _libs,
        _name,
        None,
        SOFTMAX,
        "the standard has no softmax",
        rewrite=SOFTMAX_REWRITE,
        example=_example,
    )
for _libs, _name in [("t", "sigmoid"), ("t", "special.expit"), ("j", "nn.sigmoid")]:
    chapter.function(
        _libs,
        _name,
        None,
        SIGMOID,
        "the standard has no sigmoid",
        rewrite="1 / (1 + xp.exp(-{x}))",
        example=f"lib.{_name}(x)",
    )
for _libs, _name in [("t", "relu"), ("t", "nn.functional.relu"), ("j", "nn.relu")]:
    chapter.function(
        _libs,
        _name,
        "maximum",
        "xp.maximum(x, 0)",
        RELU_NOTE,
        rewrite="xp.maximum({x}, 0.0)",
        example=f"lib.{_name}(x)",
    )
for _libs, _name, _rewrite in [
    # torch's one-hot rows have the indices' dtype (int64), jax's its default float
    ("t", "nn.functional.one_hot", "xpx.one_hot({x}, {num_classes}, dtype={x}.dtype)"),
    ("j", "nn.one_hot", "xpx.one_hot({x}, {num_classes})"),
]:
    chapter.function(
        _libs,
        _name,
        None,
        _rewrite.replace("{x}", "x"),
        "not in the standard; array-api-extra has one_hot",
        rewrite=_rewrite,
        example=f"lib.{_name}(i, num_classes=8)",
    )
chapter.function(
    "t",
    "nn.functional.pad",
    None,
    "xpx.pad(x, pad_width)",
    "array-api-extra has pad; torch lists the padding from the last axis backwards",
    no_rewrite="torch lists the padding in pairs from the last axis backwards, "
    "array-api-extra's pad_width from the first axis on: the pairs must be regrouped "
    "and reversed, which a template over the call's source cannot do for a list it "
    "does not see written out",
)
#: the mean over rows of minus the log-softmax at each row's class (class indices, the
#: classes along axis 1 of a 2-D input); weight=, reduction=, label_smoothing= and
#: ignore_index= are arguments the rendering refuses to drop. Class probabilities or
#: inputs beyond 2-D fail in take_along_axis, so no replay verifies them.
CROSS_ENTROPY = (
    "-xp.mean(xp.take_along_axis({x} - xp.max({x}, axis=1, keepdims=True) - "
    "xp.log(xp.sum(xp.exp({x} - xp.max({x}, axis=1, keepdims=True)), axis=1, keepdims=True)), "
    "xp.reshape({arg1}, (-1, 1)), axis=1))"
)
chapter.function(
    "t",
    "nn.functional.cross_entropy",
    None,
    "-xp.mean(xp.take_along_axis(log_softmax(x), xp.reshape({arg1}, (-1, 1)), axis=1))",
    "the standard has no losses: the log-softmax at each row's class, averaged",
    rewrite=CROSS_ENTROPY,
    example="lib.nn.functional.cross_entropy(x, ix)",
)
for _name in ("no_grad", "inference_mode"):
    chapter.function(
        "t",
        _name,
        None,
        f"torch.{_name}() if array_api_compat.is_torch_namespace(xp) else contextlib.nullcontext()",
        "autograd is outside the standard; keep the context manager for PyTorch only",
        no_rewrite="autograd is outside the standard, and the context manager does not keep "
        "the cell from running on other libraries (it changes nothing their arrays do): "
        "it stays as written; a cell for every library can keep it for PyTorch only",
    )

#: why autograd and torch.nn stay as written (the README's fixing section says it too)
AUTOGRAD_REASON = (
    "autograd is outside the standard (gradients, the backward pass, a tensor's .grad and "
    ".data are PyTorch's; JAX spells them jax.grad): it stays as written, and the array "
    "code around it is what ports"
)
MODULE_REASON = (
    "torch.nn modules and optimizers are PyTorch's (parameters autograd trains, state, "
    "train and eval modes): the standard has arrays and functions, no modules, so it stays "
    "as written; a portable model keeps its weights as arrays and writes its forward "
    "pass with xp"
)
for _name in ("backward", "retain_grad", "requires_grad_", "register_hook"):
    chapter.method(
        "t",
        _name,
        None,
        f"x.{_name}(...)",
        "autograd is outside the standard; keep it for PyTorch",
        no_rewrite=AUTOGRAD_REASON,
    )
for _name in ("grad", "data", "grad_fn"):
    chapter.add(
        "t",
        "attribute",
        _name,
        NS,
        None,
        f"x.{_name}",
        "autograd is outside the standard; keep it for PyTorch",
        no_rewrite=AUTOGRAD_REASON,
    )
for _name in (
    "nn.Module",
    "nn.Linear",
    "nn.Bilinear",
    "nn.Embedding",
    "nn.Dropout",
    "nn.LayerNorm",
    "nn.BatchNorm1d",
    "nn.BatchNorm2d",
    "nn.Conv1d",
    "nn.Conv2d",
    "nn.Sequential",
    "nn.ModuleList",
    "nn.ModuleDict",
    "nn.Parameter",
    "nn.ParameterList",
    "nn.Identity",
    "nn.ReLU",
    "nn.GELU",
    "nn.Tanh",
    "nn.Sigmoid",
    "nn.Softmax",
    "nn.CrossEntropyLoss",
    "nn.MSELoss",
    "optim.SGD",
    "optim.Adam",
    "optim.AdamW",
):
    chapter.function(
        "t",
        _name,
        None,
        f"xp.backend.{_name.rpartition('.')[2]}(...)",
        "torch.nn and torch.optim are not in the standard; keep them for PyTorch",
        no_rewrite=MODULE_REASON,
    )

ENTRIES = chapter.entries
