"""Creation and conversion: ``array()``/``tensor()`` and copies, which the standard spells
with asarray; a shape given as separate arguments; the diagonal offset of triu/tril.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import USAGE, Chapter, renamed

chapter = Chapter()

#: array()/tensor() always copy: asarray in the same library, saying so (a person's
#: torch.float64 stays as written, the library's own spelling of a standard dtype)
_LITERAL = "{lib}.asarray({x}, dtype={given_dtype}, device={device}, copy=True)"
_PORTABLE_LITERAL = "xp.asarray({x}, dtype={dtype}, device={device}, copy=True)"
chapter.function(
    "njc",
    "array",
    "asarray",
    "xp.asarray(obj, dtype={dtype})",
    "array() is NumPy's spelling; xp.asarray(obj, copy=True) when a copy is the point",
    rewrite=_LITERAL,
    portable=_PORTABLE_LITERAL,
    example="lib.array([[1.5, 2.0], [3.0, -1.0]])",
)
chapter.function(
    "t",
    "tensor",
    "asarray",
    "xp.asarray(data, dtype={dtype})",
    "torch.tensor always copies; xp.asarray(data, copy=True) says so in the standard",
    rewrite=_LITERAL,
    portable=_PORTABLE_LITERAL,
    example="lib.tensor([[1, 2], [3, 4]])",
)
chapter.function("t", "as_tensor", "asarray", "xp.asarray(data, dtype={dtype})", renamed("asarray"))
chapter.function(
    "t",
    "from_numpy",
    "asarray",
    "xp.asarray(a)",
    "or xp.from_dlpack(a) for a zero-copy view on the same device",
)
chapter.function(
    "njc",
    "copy",
    "asarray",
    "xp.asarray(x, copy=True)",
    "the standard copies with asarray",
    rewrite="xp.asarray({x}, copy=True)",
    example="lib.copy(x)",
)
chapter.function(
    "t",
    "clone",
    "asarray",
    "xp.asarray(x, copy=True)",
    "the standard copies with asarray",
    rewrite="xp.asarray({x}, copy=True)",
    example="lib.clone(x)",
)
chapter.function(
    "nc",
    "ascontiguousarray",
    "asarray",
    "xp.asarray(x)",
    "memory layout is not part of the standard",
)
chapter.function("njc", "identity", "eye", "xp.eye({arg0})", renamed("eye"))
#: why torch.empty(2, 3) keeps its spelling: the rewrite could only be verified on values
NO_EMPTY_REWRITE = (
    "an empty array holds whatever its memory held: no replay can compare its values, so "
    "no rewrite of it can be verified; write the shape as one tuple, (2, 3), by hand"
)
_CREATION_KEYWORDS = ", dtype={given_dtype}, device={device}, requires_grad={requires_grad}"
for _name in ("zeros", "ones", "empty"):  # the shape as one tuple, in torch itself
    chapter.add(
        "t",
        "function",
        _name,
        USAGE,
        _name,
        f"xp.{_name}({{sizes}})",
        "the standard takes the shape as one tuple",
        when="varargs_shape",
        **(
            {"no_rewrite": NO_EMPTY_REWRITE}
            if _name == "empty"
            else {
                "rewrite": f"{{lib}}.{_name}({{sizes}}{_CREATION_KEYWORDS})",
                "portable": f"xp.{_name}({{sizes}})",
                "example": f"lib.{_name}(2, 3)",
            }
        ),
    )
for _name in ("triu", "tril"):
    chapter.add(
        "*",
        "function",
        _name,
        USAGE,
        _name,
        f"xp.{_name}(x, k={{k}})",
        "the standard's diagonal offset is the keyword k= (torch's diagonal=)",
        when="offset_not_k",
        rewrite=f"xp.{_name}({{x}}, k={{k}})",
        example=f"lib.{_name}(m, 1)",
    )

ENTRIES = chapter.entries
