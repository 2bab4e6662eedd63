"""Each type once (issue 17 item 1): no two dataclasses of porter_ext declare the same
record field by field. A stage's working type and the model's report type share their
fields by being one type, or by one holding or extending the other, never by copying.

Read from the source with ``ast``: the fields a class declares itself (its annotated
class attributes, ``ClassVar`` left out), so a class that extends another shares the
inherited fields without declaring them again.
"""

from __future__ import annotations

import ast
from itertools import combinations
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent.parent / "porter_ext"

#: more shared field names than this is a type written twice
MOST_SHARED = 5

#: pairs of dataclasses left sharing more than `MOST_SHARED` field names, and why
LEFT = {
    frozenset({"compare/arrays.py:ArrayStats", "model/comparison.py:OutputComparison"}): (
        "the bounded-memory array pass's raw measures (NumPy histogram rows and block "
        "maxima, the largest magnitude) from which one row's numbers are taken"
    ),
    frozenset({"fix/checks.py:Site", "model/calls.py:CallRecord"}): (
        "what the source alone says of a call (a static check: no devices, counts or "
        "values) and what a run recorded of it; both are placed in the source and named, "
        "and `porter lint` and `%%port` agree on the words, not on one record"
    ),
    frozenset({"model/calls.py:CallRecord", "model/diagnostics.py:Diagnostic"}): (
        "a call as recorded (its place in the recorded source, what ran) and one row a view "
        "shows, which may be a call's or a replay's, a device's, an output's: the row is "
        "placed as the editor counts, where the code is written, and says it in words"
    ),
    frozenset({"fix/checks.py:Site", "model/diagnostics.py:Diagnostic"}): (
        "what the source alone says of a call (`porter lint`, no run) and a row of a "
        "recorded cell's diagnostics; both are placed and named, in the same words"
    ),
    frozenset({"model/cells.py:CellEntry", "report/html_cells.py:CellView"}): (
        "the one cell template's view of an entry: the entry's own fields, capped and laid "
        "out for a page (source lines with their notes, long tables clipped), none derived"
    ),
    frozenset({"model/calls.py:CallRecord", "spec/replacement.py:Replacement"}): (
        "a row of the spelling table (a template, for any call of that name) and a call "
        "classified by it: its verdict names the row's kind, library and status, its "
        "suggestion is the template spelled with the call's own expressions"
    ),
}


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _declared_fields(node: ast.ClassDef) -> set[str]:
    """The fields ``node`` declares in its own body (not those it inherits)."""
    found = set()
    for stmt in node.body:
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and "ClassVar" not in ast.unparse(stmt.annotation)
        ):
            found.add(stmt.target.id)
    return found


def dataclass_fields(tree: ast.AST, rel: str) -> dict[str, set[str]]:
    """``rel:Class`` -> the fields it declares, for every dataclass of a module."""
    return {
        f"{rel}:{node.name}": _declared_fields(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and _is_dataclass(node)
    }


def written_twice(classes: dict[str, set[str]]) -> dict[frozenset[str], list[str]]:
    """Pairs of classes that declare more than `MOST_SHARED` of the same field names."""
    return {
        frozenset({a, b}): sorted(classes[a] & classes[b])
        for a, b in combinations(sorted(classes), 2)
        if len(classes[a] & classes[b]) > MOST_SHARED
    }


def _package_classes() -> dict[str, set[str]]:
    classes: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        classes.update(dataclass_fields(ast.parse(path.read_text(encoding="utf-8")), rel))
    return classes


def test_no_two_dataclasses_declare_the_same_record():
    found = written_twice(_package_classes())
    wrong = {" & ".join(sorted(pair)): names for pair, names in found.items() if pair not in LEFT}
    assert not wrong, wrong


def test_every_pair_left_is_still_written_twice():
    # an allowance outliving its pair would hide the next one
    found = written_twice(_package_classes())
    assert [" & ".join(sorted(pair)) for pair in LEFT if pair not in found] == []


def test_the_check_counts_declared_fields_only():
    source = (
        "from dataclasses import dataclass, field\n"
        "@dataclass(frozen=True)\n"
        "class Outcome:\n"
        "    a: int\n    b: int\n    c: int\n    d: int\n    e: int\n    f: int\n"
        "@dataclass(frozen=True)\n"
        "class Entry(Outcome):\n"
        "    rows: list = field(default_factory=list)\n"
        "@dataclasses.dataclass\n"
        "class Copy:\n"
        "    a: int\n    b: int\n    c: int\n    d: int\n    e: int\n    f: int\n"
        "    LIMIT: ClassVar[int] = 3\n"
        "class Plain:\n"
        "    a: int\n    b: int\n    c: int\n    d: int\n    e: int\n    f: int\n"
    )
    classes = dataclass_fields(ast.parse(source), "m.py")
    assert set(classes) == {"m.py:Outcome", "m.py:Entry", "m.py:Copy"}
    assert classes["m.py:Entry"] == {"rows"}
    assert written_twice(classes) == {
        frozenset({"m.py:Outcome", "m.py:Copy"}): ["a", "b", "c", "d", "e", "f"]
    }
