"""No parameter is typed ``Any`` where a porter type is meant (issue 17 item 8): a
parameter whose name says what it is (a recorder, a backend, a request, a shell ...) is
annotated with that type. Arrays and values of unknown libraries stay ``Any``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "porter_ext"


#: names that say which porter type a parameter holds (alone or as the end of the name:
#: ``person_shell``, ``replay_settings``)
PORTER_NAMES = (
    "recorder",
    "rec",
    "syntax",
    "backend",
    "request",
    "session",
    "shell",
    "entry",
    "site",
    "record",
    "callee",
    "verdict",
    "settings",
    "result",
    "replay",
    "job",
    "plan",
    "guard",
    "token",
    "policy",
    "spec",
    "config",
    "report",
    "rewrite",
    "diff",
    "comparison",
)
_NAMED = re.compile(r"(?:^|_)(?:" + "|".join(PORTER_NAMES) + r")$")

#: parameters with such a name that hold no porter type, and why
ALLOWED: dict[str, str] = {}


def _is_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() == "Any"
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        # ``Any | None``: still Any
        sides = (annotation.left, annotation.right)
        return any(_is_any(side) for side in sides) and all(
            _is_any(side) or (isinstance(side, ast.Constant) and side.value is None)
            for side in sides
        )
    return isinstance(annotation, ast.Name) and annotation.id == "Any"


def _fields(node: ast.ClassDef) -> list[ast.AnnAssign]:
    return [n for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]


def typed_any(rel: str, tree: ast.AST) -> list[str]:
    """``rel:function:parameter`` for each parameter (or class field: a dataclass's
    parameter) annotated ``Any`` whose name says it is a porter type."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            for arg in params:
                if _is_any(arg.annotation) and _NAMED.search(arg.arg):
                    found.append(f"{rel}:{node.name}:{arg.arg}")
        elif isinstance(node, ast.ClassDef):
            for field in _fields(node):
                if _is_any(field.annotation) and _NAMED.search(field.target.id):
                    found.append(f"{rel}:{node.name}:{field.target.id}")
    return found


def test_no_parameter_named_for_a_porter_type_is_typed_any():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        offenders += typed_any(rel, ast.parse(path.read_text(encoding="utf-8")))
    wrong = sorted(set(offenders) - set(ALLOWED))
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_parameters_and_fields_by_their_names():
    source = (
        "from typing import Any\n"
        "def run(recorder: Any, x: Any, person_shell: 'Any', spectrum: Any, site: Any | None): pass\n"
        "class Job:\n"
        "    settings: Any\n"
        "    values: Any\n"
        "    def go(self, *, replay_result: Any, backend: 'Backend'): pass\n"
    )
    found = typed_any("m.py", ast.parse(source))
    assert found == [
        "m.py:run:recorder",
        "m.py:run:person_shell",
        "m.py:run:site",
        "m.py:Job:settings",
        "m.py:go:replay_result",
    ]
