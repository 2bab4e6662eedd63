"""Executable rewrites: a table entry's ``rewrite`` template filled with the source text of
one call's arguments (``x.sum(1)`` → ``xp.sum(x, axis=1)``).

The template language is the suggestions' (`porter_ext.spec.replacements`), over source
instead of values: ``{x}`` is the array (a method's receiver, a function's operand 0),
``{arg0}``… the positional arguments as written, ``{lib}`` the library's module as the
call names it (``torch`` in ``torch.cuda.synchronize()``: runtime calls move within it), ``{axis}`` the ``axis=``/``dim=``/
``dims=`` keyword or operand 1, ``{keepdims}`` ``keepdims=``/``keepdim=``, ``{shape}``
``shape=`` or the operands after the array as one tuple, ``{sizes}`` all the operands as
one tuple (a creation call's), ``{dtype}`` ``dtype=`` or operand 1 as the standard names
it (`dtype_source`), ``{given_dtype}`` ``dtype=`` as written, any other ``{name}`` the
keyword ``name=``; a segment ``, name={p}`` is left out when the call did
not pass ``p``. A template that assigns (``{x} = xp.sort({x})``) or writes into the
array (``{x}[...] = 0``, an in-place method's: the array's views see the write) replaces a
whole statement. Rendering refuses (`NoRewrite`, with the reason) rather than drop an argument
the template does not use: a rewrite that loses ``decimals=`` or ``k=`` changes meaning.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from porter_ext.spec.replacement import Replacement
from porter_ext.spec.replacements import STANDARD_DTYPES
from porter_ext.spec.sections import NotWritten, sections_source

__all__ = [
    "EXAMPLE_INPUTS",
    "NoRewrite",
    "SourceCall",
    "call_from_source",
    "dtype_source",
    "part_template",
    "render_rewrite",
    "rewrite_from_template",
    "suggestion_from_source",
    "writes_in_place",
]

#: the inputs examples are written over: name → (standard dtype, data)
EXAMPLE_INPUTS: Mapping[str, tuple[str, object]] = {
    "x": ("float64", [[3.0, -1.25, 2.5], [0.5, 4.0, -2.0]]),
    "y": ("float64", [[1.0, 2.0, -3.0], [0.25, -0.5, 8.0]]),
    "v": ("float64", [3.0, 1.0, 2.0, -1.0]),
    "p": ("float64", [[0.25, 0.5, 0.75], [0.1, 0.2, 0.9]]),
    "q": ("float64", [[1.5, 2.0, 0.5], [3.0, 0.25, 2.0]]),
    "i": ("int64", [[4, 1, 3], [2, 7, 5]]),
    "j": ("int64", [[1, 2, 1], [3, 1, 2]]),
    "b": ("bool", [[True, False, True], [False, False, True]]),
    "m": ("float64", [[2.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 4.0]]),
    "n": ("int64", 4),
    "f": ("float64", 2.5),
    "t": ("bool", True),
    "c": ("complex128", complex(1.0, -2.0)),
    "ix": ("int64", [2, 0]),  # a class index per row of x
}

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_OPTIONAL_KEYWORD = re.compile(r",\s*\w+=\{(\w+)\}")
_ARG = re.compile(r"arg(\d)")
#: keywords each placeholder reads, and the operand it falls back to (None: keyword only)
_SLOTS: dict[str, tuple[tuple[str, ...], int | None]] = {
    "x": ((), 0),
    "axis": (("axis", "dim", "dims"), 1),
    "axis_kw": (("axis", "dim", "dims"), None),
    "keepdims": (("keepdims", "keepdim"), None),
    "decimals": (("decimals",), 1),
    "k": (("k", "offset", "diagonal"), 1),
    "num_classes": (("num_classes",), 1),
    "min": (("min", "a_min"), 1),
    "max": (("max", "a_max"), 2),
    "correction": (("correction", "ddof"), None),
    "dtype": (("dtype",), 1),
    "given_dtype": (("dtype",), None),
}
#: the placeholders of a split's parts (`porter_ext.spec.sections`) → the axis it cuts
#: (None: the call's ``axis=``, by default 0)
_SECTIONS: dict[str, str | None] = {"sections": None, "row_sections": "0", "column_sections": "1"}
#: keywords whose value the entry's condition already fixed (``rounding_mode="floor"`` is
#: why ``torch.div`` became ``floor_divide``): the rewrite says them without naming them
_DECIDED: dict[str, tuple[str, ...]] = {
    "floor_rounding": ("rounding_mode",),
    "trunc_rounding": ("rounding_mode",),
    "counts_only": ("return_counts",),
}
#: Python types as NumPy reads them in ``astype(int)``
_PYTHON_DTYPES = {"int": "int64", "float": "float64", "bool": "bool", "complex": "complex128"}
#: torch's other names of standard dtypes (``torch.long``)
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Dict)


def _library_dtype_aliases(library: str) -> dict[str, str]:
    """The library's other names for standard dtypes (its adapter's ``dtype_aliases``)."""
    from porter_ext.backends import LIBRARIES, get_backend

    return get_backend(library).dtype_aliases if library in LIBRARIES else {}


class NoRewrite(ValueError):
    """This call cannot be rewritten with this entry; the message says why."""


@dataclass(frozen=True)
class SourceCall:
    """One call as written: ``receiver`` is a method's array (None for functions), ``args``
    and ``kwargs`` the arguments' source text; ``statement`` says the call is a whole
    expression statement (where an assigning rewrite may go)."""

    kind: str
    receiver: str | None
    args: tuple[str, ...] = ()
    kwargs: Mapping[str, str] = field(default_factory=dict)
    statement: bool = False
    #: the source naming the entry's library module (``torch``, ``th``), when known
    lib: str | None = None


def dtype_source(text: str, library: str = "*") -> str:
    """A dtype as the call writes it, as the standard writes it: ``np.float32``,
    ``torch.long``, ``int`` or ``"float32"`` → ``xp.float32``/``xp.int64``; an array's own
    ``y.dtype`` and ``xp.float32`` stay as written. Raises `NoRewrite` for any other."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        node = None
    name = None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value if node.value in STANDARD_DTYPES else None
    elif isinstance(node, ast.Name):
        name = _PYTHON_DTYPES.get(node.id)
    elif isinstance(node, ast.Attribute):
        if node.attr == "dtype" or (isinstance(node.value, ast.Name) and node.value.id == "xp"):
            return text
        name = node.attr if node.attr in STANDARD_DTYPES else None
        if name is None:
            name = _library_dtype_aliases(library).get(node.attr)
    if name is None:
        raise NoRewrite(f"the dtype {text} is not one of the standard's, as the source names it")
    return f"xp.{name}"


class _Filler:
    def __init__(self, call: SourceCall, entry: Replacement | None = None) -> None:
        self.call = call
        self.library = entry.library if entry is not None else "*"
        self.ops = (call.receiver, *call.args) if call.kind != "function" else call.args
        self.shift = 1 if call.kind != "function" else 0
        self.used_ops: set[int] = set()
        decided = _DECIDED.get(entry.when or "", ()) if entry is not None else ()
        self.used_keys: set[str] = set(decided)

    def get(self, name: str) -> str | None:
        match = _ARG.fullmatch(name)
        if match:
            return self._operand(int(match.group(1)) + self.shift)
        if name == "shape":
            return self._shape()
        if name == "sizes":
            return self._sizes()
        if name == "lib":
            return self.call.lib
        if name in _SECTIONS:
            return self._sections(_SECTIONS[name])
        if name == "correction" and "unbiased" in self.call.kwargs:
            self.used_keys.add("unbiased")
            return f"int({self.call.kwargs['unbiased']})"
        keys, position = _SLOTS.get(name, ((name,), None))
        value = None
        for key in keys:
            if key in self.call.kwargs:
                self.used_keys.add(key)
                value = self.call.kwargs[key]
                break
        else:
            value = self._operand(position) if position is not None else None
        if name == "dtype" and value is not None:
            return dtype_source(value, self.library)
        if name == "given_dtype" and value in _PYTHON_DTYPES and self.call.lib:
            # ``dtype=bool`` as written is NumPy's and PyTorch's reading of a Python type,
            # which the standard's asarray does not take: the library's own dtype of it
            return f"{self.call.lib}.{_PYTHON_DTYPES[value]}"
        return value

    def _sections(self, axis: str | None) -> str | None:
        """``np.split(x, [3, 5])``'s parts as slices of ``x`` (`porter_ext.spec.sections`);
        ``axis``: the split's own (None: ``axis=`` or operand 2, else 0)."""
        array = self._operand(0)
        sections = self.call.kwargs.get("indices_or_sections")
        if sections is not None:
            self.used_keys.add("indices_or_sections")
        else:
            sections = self._operand(1)
        if axis is None:
            axis = self.call.kwargs.get("axis")
            if axis is not None:
                self.used_keys.add("axis")
            else:
                axis = self._operand(2) or "0"
        if array is None or sections is None:
            return None
        try:
            return sections_source(array, sections, axis)
        except NotWritten as exc:
            raise NoRewrite(str(exc)) from None

    def _shape(self) -> str | None:
        """``shape=``, or every operand after the array as one tuple (``view(2, 3)``)."""
        if "shape" in self.call.kwargs:
            self.used_keys.add("shape")
            return self.call.kwargs["shape"]
        rest = list(range(1, len(self.ops)))
        if not rest:
            return None
        self.used_ops.update(rest)
        parts = [str(self.ops[i]) for i in rest]
        if len(parts) == 1 and not _is_int_literal(parts[0]):
            return parts[0]  # a shape as one argument (a tuple, or a name that holds one)
        return f"({', '.join(parts)},)" if len(parts) == 1 else f"({', '.join(parts)})"

    def _sizes(self) -> str | None:
        """A creation call's positional sizes as one tuple (``zeros(2, n)`` → ``(2, n)``)."""
        if not self.ops:
            return None
        self.used_ops.update(range(len(self.ops)))
        parts = [str(op) for op in self.ops]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"

    def _operand(self, position: int) -> str | None:
        if position >= len(self.ops) or self.ops[position] is None:
            return None
        self.used_ops.add(position)
        return self.ops[position]

    def unused(self) -> list[str]:
        left = [self.ops[i] for i in range(len(self.ops)) if i not in self.used_ops]
        left += [f"{k}={v}" for k, v in self.call.kwargs.items() if k not in self.used_keys]
        return [str(v) for v in left]


def _is_int_literal(source: str) -> bool:
    """``3`` or ``-1``: one size, which the standard's shape takes as a 1-tuple."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _needs_parentheses(source: str) -> bool:
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return True
    return not isinstance(node, _ATOMS) and not _own_parentheses(source)


def _own_parentheses(source: str) -> bool:
    """``(a, b)``: a tuple written in its own parentheses (not ``(a), (b)``)."""
    if not (source.startswith("(") and source.endswith(")")):
        return False
    try:
        return isinstance(ast.parse(source[1:-1], mode="eval").body, ast.Tuple)
    except SyntaxError:
        return False


def _in_argument_slot(text: str, start: int, end: int) -> bool:
    before = text[:start].rstrip()
    after = text[end:].lstrip()
    return before.endswith(("(", ",", "=", "[")) and after.startswith((")", ",", "]"))


def render_rewrite(entry: Replacement, call: SourceCall, part: str | int | None = None) -> str:
    """The source that replaces ``call`` (the whole statement when the template assigns),
    or with ``part`` (a field's name or index) the call and what reads that field of its
    result (``x.max(dim=1).values``); raises `NoRewrite` when the entry has none or this
    call cannot keep its meaning."""
    template = entry.rewrite if part is None else part_template(entry, part)
    if template is None:
        raise NoRewrite(entry.no_rewrite or "the entry has no rewrite")
    if _ASSIGNS.match(template) is not None:
        if not call.statement:
            raise NoRewrite(
                "an in-place method used inside an expression: its rewrite is an "
                "assignment, so it needs a statement of its own"
            )
        if writes_in_place(template):
            return _render(template, call, entry)  # any array expression can be written into
        target = call.receiver if call.kind != "function" else (call.args or (None,))[0]
        try:
            target_node = ast.parse(target or "", mode="eval").body
        except SyntaxError:
            target_node = None
        if not isinstance(target_node, ast.Name | ast.Attribute | ast.Subscript):
            raise NoRewrite("the array updated in place is not a name that can be rebound")
    return _render(template, call, entry)


#: a template that is a statement: it rebinds the array (``{x} = xp.sort({x})``) or
#: writes into it (``{x}[...] = 0``)
_ASSIGNS = re.compile(r"^\{x\}(\[\.\.\.\])?\s*=")


def writes_in_place(template: str) -> bool:
    """Whether ``template`` writes the new values into the array itself (``{x}[...] =
    ...``), as an in-place method does: every view of the array sees them."""
    return template.lstrip().startswith("{x}[...] =")


def suggestion_from_source(
    template: str, call: SourceCall, entry: Replacement | None = None
) -> str | None:
    """A suggestion (advice, not a rewrite: ``entry``'s, or one the recorder made) written
    with the call's own expressions: its ``x`` the array as written, its placeholders the
    arguments' source (``torch.ones(n, n)`` → ``xp.ones((n, n))``, not the run's
    ``(6, 6)``); None where the source does not fill it or an argument would be left
    out (the suggestion then keeps the run's values)."""
    try:
        return _render(_BARE_X.sub("{x}", template), call, entry)
    except NoRewrite:
        return None


#: the array of a suggestion's template, a bare ``x`` (not ``x.dtype``'s, nor ``xp``)
_BARE_X = re.compile(r"(?<![\w.{])x(?![\w}])")


def _render(template: str, call: SourceCall, entry: Replacement | None) -> str:
    filler = _Filler(call, entry)

    def keep_or_drop(match: re.Match[str]) -> str:
        return match.group(0) if filler.get(match.group(1)) is not None else ""

    text = _OPTIONAL_KEYWORD.sub(keep_or_drop, template)
    missing: list[str] = []

    def fill(match: re.Match[str]) -> str:
        value = filler.get(match.group(1))
        if value is None:
            missing.append(match.group(1))
            return ""
        if _needs_parentheses(value) and not _in_argument_slot(text, match.start(), match.end()):
            return f"({value})"
        return value

    rendered = _PLACEHOLDER.sub(fill, text)
    if "lib" in missing:
        raise NoRewrite(
            "no name here reaches the library's module (import it to use its "
            "device-agnostic runtime calls)"
        )
    if missing:
        raise NoRewrite(f"the call does not pass {', '.join(dict.fromkeys(missing))}")
    unused = filler.unused()
    if unused:
        raise NoRewrite(f"the rewrite would drop {', '.join(unused)}")
    return rendered


def rewrite_from_template(template: str, call: SourceCall, entry: Replacement | None = None) -> str:
    """The source that replaces ``call``: a template the run's values chose (a record's
    ``rewrite``: ``xp.log(xp.astype({arg0}, xp.float64))``) filled with the call's own
    expressions; raises `NoRewrite` where the call does not fill it or an argument would
    be left out."""
    return _render(template, call, entry)


def part_template(entry: Replacement, part: str | int) -> str | None:
    """The template of one field of the entry's tuple result (by name or index), or None."""
    if isinstance(part, int):
        return entry.parts[part][1] if -len(entry.parts) <= part < len(entry.parts) else None
    return dict(entry.parts).get(part)


def call_from_source(source: str, *, statement: bool = False) -> tuple[str, SourceCall]:
    """(the callee as written, the call) for one call expression such as ``x.sum(1)`` or
    ``lib.unique(x, axis=0)``; a method's callee is its name after the receiver."""
    node = ast.parse(source.strip(), mode="eval").body
    if isinstance(node, ast.Attribute):  # an attribute read: x.T
        receiver = ast.get_source_segment(source.strip(), node.value)
        return node.attr, SourceCall("attribute", receiver, (), {}, statement)
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {source!r}")
    text = source.strip()
    args = tuple(ast.get_source_segment(text, a) or "" for a in node.args)
    kwargs = {k.arg: ast.get_source_segment(text, k.value) or "" for k in node.keywords if k.arg}
    func = node.func
    # examples name the entry's library ``lib`` (``lib.cuda.synchronize()``)
    if (
        isinstance(func, ast.Attribute)
        and not (isinstance(func.value, ast.Name) and func.value.id == "lib")
        and not _is_lib_chain(func.value)
    ):
        receiver = ast.get_source_segment(text, func.value)
        return func.attr, SourceCall("method", receiver, args, kwargs, statement, "lib")
    return ast.get_source_segment(text, func) or "", SourceCall(
        "function", None, args, kwargs, statement, "lib"
    )


def _is_lib_chain(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "lib"
