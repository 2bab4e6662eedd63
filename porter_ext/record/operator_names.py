"""Python's operators by their method names: the function that applies each one (with
Python's reflected fallbacks), and the syntax a runner writes for those it applies as
syntax. Read by the hooks and by the runners.
"""

from __future__ import annotations

import operator
from typing import Any

#: operator name → the function that applies it (with Python's reflected fallbacks)
OPERATORS: dict[str, Any] = {
    "__add__": operator.add,
    "__sub__": operator.sub,
    "__mul__": operator.mul,
    "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv,
    "__mod__": operator.mod,
    "__pow__": operator.pow,
    "__matmul__": operator.matmul,
    "__and__": operator.and_,
    "__or__": operator.or_,
    "__xor__": operator.xor,
    "__lshift__": operator.lshift,
    "__rshift__": operator.rshift,
    "__iadd__": operator.iadd,
    "__isub__": operator.isub,
    "__imul__": operator.imul,
    "__itruediv__": operator.itruediv,
    "__ifloordiv__": operator.ifloordiv,
    "__imod__": operator.imod,
    "__ipow__": operator.ipow,
    "__imatmul__": operator.imatmul,
    "__iand__": operator.iand,
    "__ior__": operator.ior,
    "__ixor__": operator.ixor,
    "__ilshift__": operator.ilshift,
    "__irshift__": operator.irshift,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__neg__": operator.neg,
    "__pos__": operator.pos,
    "__invert__": operator.invert,
}

#: operators applied as syntax by their runner (in-place ones go through ``operator``)
BINARY_SYMBOLS = {
    "__add__": "+",
    "__sub__": "-",
    "__mul__": "*",
    "__truediv__": "/",
    "__floordiv__": "//",
    "__mod__": "%",
    "__pow__": "**",
    "__matmul__": "@",
    "__and__": "&",
    "__or__": "|",
    "__xor__": "^",
    "__lshift__": "<<",
    "__rshift__": ">>",
    "__lt__": "<",
    "__le__": "<=",
    "__gt__": ">",
    "__ge__": ">=",
    "__eq__": "==",
    "__ne__": "!=",
}
UNARY_SYMBOLS = {"__neg__": "-", "__pos__": "+", "__invert__": "~"}
