"""The shape of the code (DESIGN.md): one home per library, imports only toward earlier
stages, and no import circle, checked from the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "porter_ext"

#: the stages in data-flow order; a module may import its own stage and earlier ones
STAGES = {
    "guard": 0,
    "_version": 0,
    "_lazy": 0,
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
    "headless": 9,
    "kernelspecs": 9,
    "__init__": 10,
}

#: the array libraries, by their import names, and how a library can be named in code
LIBRARY_MODULES = ("torch", "jax", "jaxlib", "cupy", "cupyx", "dask", "array_api_strict")
LIBRARY_LITERALS = frozenset(
    {"torch", "jax", "jax.numpy", "jaxlib", "cupy", "dask", "dask.array", "array_api_strict"}
)
#: files outside backends/ that may name a library, and why
ALLOWED = {
    "spec/_replacement_data.py": "spec data: the replacement table",
    "spec/replacement.py": "spec data: the vocabulary of the table's entries",
    "spec/replacements.py": "spec: conditions that recognise a device argument by its type",
    "spec/_generate.py": "generates the spec from array-api-strict",
    "compare/tolerance.py": "policy names after torch.testing's and NumPy's conventions",
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


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The porter_ext modules ``module`` imports anywhere in its source (lazy imports too);
    ``from package import submodule`` is an edge to the submodule alone."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
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


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        edges = {m for m in _imports(module, path, modules) if m in modules and m != module}
        graph[module] = edges
    return graph


def _stage(module: str) -> int:
    parts = module.split(".")
    return STAGES[parts[1]] if len(parts) > 1 else STAGES["__init__"]


def test_the_package_import_graph_is_acyclic():
    graph = _graph()
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


def test_no_library_is_named_outside_its_backend_module():
    offenders = []
    for path in _modules().values():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("backends/") or rel in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n.partition(".")[0] in LIBRARY_MODULES for n in names):
                offenders.append(f"{rel}:{node.lineno} imports {names}")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in LIBRARY_LITERALS
            ):
                offenders.append(f"{rel}:{node.lineno} names {node.value!r}")
    assert not offenders, "\n".join(offenders)


def test_backends_declare_what_the_other_stages_ask():
    from porter_ext.backends import LIBRARIES, all_backends, get_backend

    assert tuple(b.name for b in all_backends()) == LIBRARIES
    for backend in all_backends():
        assert get_backend(backend.name) is backend
        assert backend.qualname_prefix and backend.array_type_name and backend.namespaces
        assert backend.roots and backend.module.partition(".")[0] in backend.roots
