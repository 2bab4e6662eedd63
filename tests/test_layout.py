"""The shape of the code (DESIGN.md): one home per library (outside ``backends/`` no module
imports a library, spells its name or reads an attribute only libraries have), imports
only toward earlier stages, and no import circle, checked from the source with ``ast``."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "porter_ext"

#: the stages in data-flow order; a module may import its own stage and earlier ones
STAGES = {
    "guard": 0,
    "_version": 0,
    "_lazy": 0,
    # the cell model, beneath the stages (beside spec/ and backends/, and importing
    # neither: `test_the_model_imports_no_stage`)
    "model": 1,
    "spec": 1,
    "backends": 1,
    "record": 2,
    "replay": 3,
    "compare": 4,
    "fix": 5,
    "report": 6,
    "ui": 7,
    "session": 8,
    "magics": 9,
    "cli": 9,
    "cli_parser": 9,
    "headless": 9,
    "kernelspecs": 9,
    "__init__": 10,
}

#: the array libraries, by their import names, and how a library can be named in code
LIBRARY_MODULES = ("torch", "jax", "jaxlib", "cupy", "cupyx", "dask", "array_api_strict")
LIBRARY_LITERALS = frozenset(
    {
        "torch",
        "jax",
        "jax.numpy",
        "jaxlib",
        "cupy",
        "dask",
        "dask.array",
        "array_api_strict",
        # NumPy is porter's own host format (imported anywhere), but as a backend's name
        # it is a library fact like the others
        "numpy",
    }
)
#: attributes that only array libraries give their objects (autograd, random states,
#: moving data, device objects): the other stages ask the adapters instead
LIBRARY_ATTRIBUTES = frozenset(
    {
        "requires_grad",
        "requires_grad_",
        "grad",
        "grad_fn",
        "is_leaf",
        "detach",
        "Parameter",
        "get_rng_state",
        "set_rng_state",
        "get_rng_state_all",
        "set_rng_state_all",
        "get_device_module",
        "manual_seed",
        "get_state",
        "set_state",
        "default_rng",
        "device_put",
        "device_get",
        "cuda",
        "cpu",
        "asnumpy",
        "copy_to_host",
        "accelerator",
        "platform",
        "is_cpu",
        "data_ptr",
        "block_until_ready",
        "jax_enable_x64",
    }
)
#: files outside backends/ that may name a library, and why
ALLOWED = {
    "spec/table/chapter.py": "spec data: the replacement table names each entry's library",
    "spec/table/placement.py": "spec data: torch's x.numpy() is an entry of the table",
    "spec/_generate.py": "generates the spec from array-api-strict",
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(["porter_ext", *parts]) if parts != ["__init__"] else "porter_ext"] = path
    return found


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``: imports that never run."""
    found: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
        if name == "TYPE_CHECKING":
            found.update(id(n) for child in node.body for n in ast.walk(child))
    return found


def _imports(
    module: str, path: Path, modules: dict[str, Path], *, run_time: bool = False
) -> set[str]:
    """The porter_ext modules ``module`` imports anywhere in its source (lazy imports too;
    with ``run_time``, not those only a type checker reads); ``from package import
    submodule`` is an edge to the submodule alone."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skip = _type_only(tree) if run_time else set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("porter_ext"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("porter_ext"):
                subs = {f"{target}.{a.name}" for a in node.names} & set(modules)
                out.update(subs if len(subs) == len(node.names) else {target, *subs})
    return out


def _graph(*, run_time: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        found = _imports(module, path, modules, run_time=run_time)
        edges = {m for m in found if m in modules and m != module}
        graph[module] = edges
    return graph


def _stage(module: str) -> int:
    parts = module.split(".")
    return STAGES[parts[1]] if len(parts) > 1 else STAGES["__init__"]


def test_the_package_import_graph_is_acyclic():
    # a type checker's import of a module that imports this one is no circle: it never runs
    graph = _graph(run_time=True)
    # a package's __init__ re-exports its modules: an edge from a module to its own
    # package's __init__ is a circle
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_stages_import_only_earlier_stages():
    wrong = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _stage(target) > _stage(module)
    ]
    assert not wrong, "\n".join(wrong)


#: what the cell model may import: itself and what is beneath every stage
MODEL_MAY_IMPORT = (
    "porter_ext.model",
    "porter_ext.guard",
    "porter_ext._version",
    "porter_ext._lazy",
)
#: the cell model's types: each defined once, in porter_ext/model/ (issue 17)
MODEL_TYPES = (
    "CallRecord",
    "CallOrigin",
    "ErrorInfo",
    "DeviceFinding",
    "ErrorHistogram",
    "OutputComparison",
    "ReplayEntry",
    "RewriteEntry",
    "RewriteSiteEntry",
    "DefinitionVerdict",
    "CellEntry",
    "Headline",
    "HeadlineCounts",
    "PlanItem",
    "PlanSite",
    "BackendEntry",
    "Environment",
    "Summary",
    "Source",
    "Report",
)


def test_the_model_imports_no_stage():
    wrong = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if module.startswith("porter_ext.model")
        for target in targets
        if not target.startswith(MODEL_MAY_IMPORT)
    ]
    assert "porter_ext.model.cells" in _modules()
    assert not wrong, "\n".join(wrong)


def test_each_model_type_is_defined_once_in_the_model():
    homes: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in MODEL_TYPES:
                homes.setdefault(node.name, []).append(path.relative_to(PACKAGE).as_posix())
    wrong = {
        name: where
        for name in MODEL_TYPES
        if len(where := homes.get(name, [])) != 1 or not where[0].startswith("model/")
    }
    assert not wrong, wrong


#: what names a JSON codec function (``to_dict``, ``from_dict``, ``call_to_dict``, ...)
_CODEC_NAME = re.compile(r"(^|_)(to|from)_(dict|json)$")


def _codec_in_model(rel: str, tree: ast.AST) -> list[str]:
    """Where a module of the model encodes or decodes JSON: a codec function or method,
    an import of ``json``, or a module named for JSON."""
    found = [f"{rel} is a JSON module"] if "json" in Path(rel).stem else []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _CODEC_NAME.search(node.name):
                found.append(f"{rel}:{node.lineno} defines {node.name}")
        elif isinstance(node, ast.Import):
            found += [f"{rel}:{node.lineno} imports json" for a in node.names if a.name == "json"]
        elif isinstance(node, ast.ImportFrom) and node.module == "json":
            found.append(f"{rel}:{node.lineno} imports from json")
    return found


def test_the_model_has_no_json_codec():
    """The JSON form of the model is the report stage's (``report/codec*.py``, issue 17
    item 1): the model's types are plain data and what is derived from it."""
    wrong = [
        finding
        for path in sorted((PACKAGE / "model").rglob("*.py"))
        for finding in _codec_in_model(
            path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))
        )
    ]
    assert not wrong, "\n".join(wrong)


def test_the_codec_check_sees_each_way_of_writing_one():
    source = (
        "import json\nfrom json import dumps\n"
        "class Entry:\n    def to_dict(self): ...\n    @classmethod\n"
        "    def from_dict(cls, data): ...\n"
        "def call_to_dict(call): ...\ndef plan_line(item): ...\n"
    )
    found = _codec_in_model("model/json_form.py", ast.parse(source))
    assert len(found) == 6, found
    assert not _codec_in_model("model/plan.py", ast.parse("def plan_line(item): ...\n"))


_MODULE_NAME = re.compile(r"porter_ext\.(\w+)")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        first = node.body[0] if isinstance(node, kinds) and node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            found.add(id(first.value))
    return found


def _upward_names(module: str, tree: ast.AST) -> list[str]:
    """The code strings of ``module`` (not its docstrings) that name a module of a later
    stage: code a lower stage would import or execute at run time (a worker's program),
    which no import check sees."""
    docs, stage, found = _docstrings(tree), _stage(module), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docs:
                continue
            for match in _MODULE_NAME.finditer(node.value):
                later = STAGES.get(match.group(1))
                if later is not None and later > stage:
                    found.append(f"{module}:{node.lineno} names porter_ext.{match.group(1)}")
    return found


def test_no_stage_executes_code_of_a_later_stage():
    offenders = []
    for module, path in _modules().items():
        offenders += _upward_names(module, ast.parse(path.read_text(encoding="utf-8")))
    assert not offenders, "\n".join(offenders)


def test_the_upward_exec_check_sees_a_program_named_in_a_string():
    code = (
        '"""A docstring may name porter_ext.session."""\n'
        'CODE = "import porter_ext.session.worker_program as w"\n'
    )
    found = _upward_names("porter_ext.replay.worker_kernel", ast.parse(code))
    assert found == ["porter_ext.replay.worker_kernel:2 names porter_ext.session"]


def _library_names(rel: str, tree: ast.AST) -> list[str]:
    """Where the module ``rel`` names an array library: imports it, spells its name (or a
    dotted path inside it) as a string, or reads an attribute only libraries have (the
    attributes of Python's own modules, ``sys.platform``, are Python's)."""
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        if any(n.partition(".")[0] in LIBRARY_MODULES for n in names):
            found.append(f"{rel}:{node.lineno} imports {names}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            dotted = _DOTTED.fullmatch(text) and text.partition(".")[0] in LIBRARY_MODULES
            if text in LIBRARY_LITERALS or dotted:
                found.append(f"{rel}:{node.lineno} names {text!r}")
        if (
            isinstance(node, ast.Attribute)
            and node.attr in LIBRARY_ATTRIBUTES
            and not (isinstance(node.value, ast.Name) and node.value.id in _PYTHON_MODULES)
        ):
            found.append(f"{rel}:{node.lineno} reads the library attribute .{node.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in LIBRARY_ATTRIBUTES
        ):
            found.append(f"{rel}:{node.lineno} reads the library attribute {node.args[1].value!r}")
    return found


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_PYTHON_MODULES = frozenset(sys.stdlib_module_names)


def test_no_library_is_named_outside_its_backend_module():
    offenders = []
    for path in _modules().values():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("backends/") or rel in ALLOWED:
            continue
        offenders += _library_names(rel, ast.parse(path.read_text(encoding="utf-8")))
    assert not offenders, "\n".join(offenders)


def test_the_library_check_sees_each_way_of_naming_a_library():
    source = (
        "import sys\n"
        "import torch\n"
        "spec = 'jax'\n"
        "where = 'dask.array.core'\n"
        "x.requires_grad_(True)\n"
        "getattr(x, 'grad_fn', None)\n"
        "host = sys.platform\n"
        "device = 'cpu'\n"
    )
    found = _library_names("m.py", ast.parse(source))
    assert sorted(f.split(" ", 1)[0] for f in found) == [
        "m.py:2",
        "m.py:3",
        "m.py:4",
        "m.py:5",
        "m.py:6",
    ]


def test_backends_declare_what_the_other_stages_ask():
    from porter_ext.backends import LIBRARIES, all_backends, get_backend

    assert tuple(b.name for b in all_backends()) == LIBRARIES
    for backend in all_backends():
        assert get_backend(backend.name) is backend
        assert backend.qualname_prefix and backend.array_type_name and backend.namespaces
        assert backend.roots and backend.module.partition(".")[0] in backend.roots


def test_an_import_for_the_type_checker_is_no_run_time_edge(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "from porter_ext.model import calls\n"
        "if TYPE_CHECKING:\n"
        "    from porter_ext.model.cells import CellEntry\n"
    )
    modules = _modules()
    assert _imports("porter_ext.model.plan", path, modules, run_time=True) == {
        "porter_ext.model.calls"
    }
    assert "porter_ext.model.cells" in _imports("porter_ext.model.plan", path, modules)


def _is_shim(tree: ast.Module) -> bool:
    """Whether a module only re-exports what lives elsewhere: a docstring, imports and
    ``__all__``, nothing of its own."""
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
    own = [
        n
        for n in body
        if n not in imports
        and not (
            isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["__all__"]
        )
    ]
    return bool(imports) and not own


def test_no_module_is_a_re_export_shim():
    # a package's __init__ may gather its modules' names; any other module that only
    # re-exports is a move left half done (issue 17: report/model.py, fix/plan.py)
    shims = [
        path.relative_to(PACKAGE).as_posix()
        for path in _modules().values()
        if path.name != "__init__.py" and _is_shim(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not shims, shims


def test_the_shim_check_sees_a_module_that_only_re_exports():
    shim = '"""Moved."""\nfrom porter_ext.model.plan import build_plan\n__all__ = ["build_plan"]\n'
    assert _is_shim(ast.parse(shim))
    assert not _is_shim(ast.parse(shim + "LIMIT = 3\n"))


def test_the_fix_stage_is_whole():
    """The verification of rewrites lives in the fix stage (issue 17 item 2), and what it
    replays through beneath it: the session keeps no module of either."""
    modules = set(_modules())
    session = [m.rpartition(".")[2] for m in modules if m.startswith("porter_ext.session.")]
    moved = ("fix", "deferred", "notebook_fix", "pipeline", "magic_lines")
    assert not [name for name in session if name.startswith(moved)], session
    assert {
        "porter_ext.fix.verify",
        "porter_ext.fix.verify_rounds",
        "porter_ext.fix.deferred",
        "porter_ext.fix.notebook",
        "porter_ext.compare.pipeline",
    } <= modules


#: the most parameters a function takes (self/cls not counted, keyword-only counted)
MAX_PARAMETERS = 7
#: what a longer function's docstring says, with why (`augitem`, a recording hook)
_BY_REASON = re.compile(r"parameters\s+by\s+reason", re.IGNORECASE)
#: functions of other stages still over the limit, each for its stage's owner to bring
#: under it (or to give its reason)
LONG_PARAMETER_LISTS_LEFT: frozenset[str] = frozenset()


def _long_parameter_lists(rel: str, tree: ast.AST) -> list[str]:
    """The functions of the module ``rel`` (``path:Class.function``) that take more than
    `MAX_PARAMETERS` parameters without saying why in their docstring."""
    found = []

    def visit(node: ast.AST, outer: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{outer}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    args = child.args
                    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                    if named and named[0] in ("self", "cls") and isinstance(node, ast.ClassDef):
                        named = named[1:]
                    count = len(named) + (args.vararg is not None) + (args.kwarg is not None)
                    reason = _BY_REASON.search(ast.get_docstring(child) or "")
                    if count > MAX_PARAMETERS and reason is None:
                        found.append(f"{rel}:{name}")
                visit(child, f"{name}.")
            else:
                visit(child, outer)

    visit(tree, "")
    return found


def test_no_function_takes_more_than_seven_parameters_without_a_reason():
    # issue 17 item 8: values that travel together travel as the object they belong to
    offenders = []
    for path in _modules().values():
        rel = path.relative_to(PACKAGE).as_posix()
        offenders += _long_parameter_lists(rel, ast.parse(path.read_text(encoding="utf-8")))
    wrong = sorted(set(offenders) - LONG_PARAMETER_LISTS_LEFT)
    assert not wrong, "\n".join(wrong)


def test_the_parameter_check_counts_as_the_rule_says():
    source = (
        "def seven(a, b, c, d, e, f, g): pass\n"
        "def eight(a, b, c, d, e, f, g, *, h): pass\n"
        "def starred(a, b, c, d, e, f, *args, **kwargs): pass\n"
        "class C:\n"
        "    def method(self, a, b, c, d, e, f, g): pass\n"
        "    def longer(self, a, b, c, d, e, f, g, h): pass\n"
        "    def told(self, a, b, c, d, e, f, g, h):\n"
        "        '''Eight parameters by reason: a hook.'''\n"
        "def outer():\n"
        "    def inner(a, b, c, d, e, f, g, h=None): pass\n"
    )
    found = _long_parameter_lists("m.py", ast.parse(source))
    assert found == ["m.py:eight", "m.py:starred", "m.py:C.longer", "m.py:outer.inner"]


#: where a cell entry may be made outside the model and the codec: the one path of a
#: recorded cell, and the entries of cells porter did not record (another thread's
#: cell, run plain; a notebook cell that never reached porter)
CELL_ENTRY_MAKERS = frozenset(
    {
        "session/cell.py:finish",
        "session/cell.py:unparsed",
        "session/session.py:Session._unrecorded",
        "session/session.py:Session.add",  # keeps what `finish` made
        "headless.py:CellOutcome.report_entries",
    }
)


def _entry_makers(rel: str, tree: ast.AST) -> list[str]:
    """The functions of ``rel`` that make a `CellEntry` or append to a session's cells."""
    found = []

    def visit(node: ast.AST, outer: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{outer}{child.name}"
                if not isinstance(child, ast.ClassDef) and any(
                    _makes_an_entry(n) for n in ast.walk(child)
                ):
                    found.append(f"{rel}:{name}")
                visit(child, f"{name}.")

    visit(tree, "")
    return found


def _makes_an_entry(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "CellEntry"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "append"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "cells"
    )


def test_a_recorded_cell_gets_its_entry_on_one_path():
    # issue 17 item 3: %%port, %port on, porter run and porter fix make a cell's entry in
    # one place (`porter_ext.session.cell`); the magics and the CLI parse, call and show
    makers = []
    for module, path in _modules().items():
        if module.split(".")[1:2] in (["model"], ["report"], ["ui"], ["fix"], ["compare"]):
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        makers += _entry_makers(rel, ast.parse(path.read_text(encoding="utf-8")))
    assert sorted(set(makers) - CELL_ENTRY_MAKERS) == []


def test_the_entry_check_sees_an_entry_made_or_appended():
    source = (
        "def made(): return CellEntry(1, 2, 'x')\n"
        "class Magics:\n"
        "    def appended(self, e): self.session.cells.append(e)\n"
        "def other(x): return x.items.append(1)\n"
    )
    found = _entry_makers("m.py", ast.parse(source))
    assert found == ["m.py:made", "m.py:Magics.appended"]


def test_every_import_for_the_type_checker_names_what_exists():
    # the annotations of `TYPE_CHECKING` imports are never evaluated at run time: a type
    # renamed or moved would leave them naming nothing, unseen
    import importlib

    missing = []
    for path in _modules().values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not (isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"):
                continue
            for imp in node.body:
                if not isinstance(imp, ast.ImportFrom) or imp.module is None:
                    continue
                module = importlib.import_module(imp.module)
                for alias in imp.names:
                    if not hasattr(module, alias.name):
                        missing.append(f"{path.name}: {imp.module}.{alias.name}")
    assert not missing, missing


def test_nothing_is_packed_past_the_formatter():
    """ruff formats every line (issue 17 item 8): no formatter pragma (skip, off) packs
    statements or arguments onto one line, in the package, its tests or benchmarks."""
    root = PACKAGE.parent
    marker = re.compile(r"#\s*fmt:\s*(" + "skip|off" + r")\b")
    packed = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("porter_ext", "tests", "benchmarks")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if marker.search(line)
    ]
    assert not packed, packed


#: elements of a cell's view; a Python string in ui/ or report/ that holds one draws a
#: cell outside the one template (`<br>` and `<code>` are Markdown table escapes; an
#: ``<iframe>`` embeds a whole report)
_CELL_MARKUP = re.compile(
    r"<(table|thead|tbody|tr|td|th|div|section|span|ol|ul|li|h[1-6]|p|b|pre|details|summary)\b"
)


def _cell_markup(source: str) -> list[str]:
    """The string literals (f-strings' parts too; docstrings aside) that hold markup of a
    cell's view."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and _CELL_MARKUP.search(node.value)
    ]


def test_ui_and_report_have_one_cell_renderer():
    """One HTML view of a cell (issue 27): the template's `cell_section`, which the HTML
    report and a cell's text/html both draw (`templating.cell_html`); no Python module of
    the show stages writes a cell's markup, and nothing builds an ipywidgets view."""
    found = {}
    for stage in ("ui", "report"):
        for path in (PACKAGE / stage).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if _cell_markup(text):
                found[str(path.relative_to(PACKAGE))] = _cell_markup(text)
            assert "ipywidgets" not in text, path
    assert not found
    templates = PACKAGE / "report" / "templates"
    defining = sorted(
        p.name for p in templates.glob("*.j2") if "macro cell_section" in p.read_text()
    )
    assert defining == ["cell.html.j2"]
    report = (templates / "report.html.j2").read_text()
    assert 'from "cell.html.j2" import cell_section' in report and "c.lines" not in report
    rendering = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if '"cell.html.j2"' in p.read_text(encoding="utf-8")
    )
    assert rendering == ["report/templating.py"]


def test_the_cell_markup_check_sees_a_second_renderer():
    assert _cell_markup('def f(x):\n    """A <table> in words."""\n    return f"<td>{x}</td>"\n')
    assert _cell_markup("s = '<section class=\"cell\">'\n")
    assert not _cell_markup('"""<div> in a docstring"""\nx = "<br>".join([])\ny = "<code>"\n')


#: the model's phrases (CONTRACT.md: the JSON carries them): a string literal holding
#: one in the extension's code means TypeScript words it again from the JSON's fields
#: (a report's counts line, ``summary.text``; what it was made with, ``environment.text``;
#: an error's line, ``error.text``)
_MODEL_PHRASES = (
    "called from",
    "verified on",
    "not verified",
    "findings: ",
    "noted: ",
    "cell(s)",
    "array call(s)",
    "mismatch(es)",
    "array API",
    "Raised ",
    "(line ",
)
_TS_STRING = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`")
_TS_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _model_phrases_in(code: str) -> list[str]:
    """The string literals of TypeScript `code` (comments aside) that hold a phrase of
    the model's."""
    # strings first, so that a `//` inside one is no comment
    literals = []
    for match in re.finditer(f"{_TS_STRING.pattern}|{_TS_COMMENT.pattern}", code, re.S):
        text = match.group(0)
        if text[0] in "'\"`" and any(p in text for p in _MODEL_PHRASES):
            literals.append(text)
    return literals


def test_the_extension_words_no_sentence_of_the_models():
    """Issue 27: a row's place and caller, a rewrite's and a file verdict's words, the
    panel's count words, a report's counts and environment lines and an error's line
    are the JSON's (`place`, `called_from_text`, `verified_text`, `summary`,
    `applied_text`, `headline.sum_format`, `summary.text`, `environment.text`,
    `error.text`); no TypeScript of the extension builds them from the JSON's bare
    fields."""
    src = PACKAGE.parent / "labextension" / "src"
    found = {
        path.name: _model_phrases_in(path.read_text(encoding="utf-8"))
        for path in sorted(src.glob("*.ts"))
        if path.name != "schema.generated.ts"
    }
    assert {name: hits for name, hits in found.items() if hits} == {}
    assert {"panelrows.ts", "diagnostics.ts", "filerewrites.ts", "render.ts"} <= set(found)


def test_the_model_phrase_check_sees_a_sentence_built_in_typescript():
    assert _model_phrases_in("el('span', 'x', ` (called from ${row.calledFrom})`);")
    assert _model_phrases_in('return "findings: " + n;')
    assert _model_phrases_in("const on = 'verified on ' + specs;")
    assert _model_phrases_in("el('div', 'v', `${s.cells ?? 0} cell(s), ${s.calls} array call(s)`);")
    assert _model_phrases_in("`porter ${v}, array API ${a}, ` + `Python ${p}`")
    assert _model_phrases_in("const line = row?.line ? ` (line ${row.line})` : '';")
    assert _model_phrases_in("el('p', 'err', 'Raised ' + error.type);")
    assert not _model_phrases_in("/* shows `called from cell 3` */\n// verified on numpy\nx;")
    assert not _model_phrases_in("appendText(row, `${named(offer.file, offer.summary)} `);")
