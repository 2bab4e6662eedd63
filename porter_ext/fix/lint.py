"""``porter lint``: the replacement catalogue applied to source without running it.

For pre-commit and CI. Each ``.py`` file (directories are searched for them and for
notebooks) and each code cell of a notebook is parsed and walked once
(`porter_ext.fix.checks`); names are resolved from the imports, so ``np.X`` is numpy's
``X`` after ``import numpy as np`` (in a notebook, the imports of every cell count). A
finding on a line carrying ``# porter: ignore`` (every code) or
``# porter: ignore[PA001,host_sync]`` (those codes, by code or name) is dropped.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from porter_ext.fix.checks import CODES, Analyzer, Site
from porter_ext.fix.static import collect_imports
from porter_ext.spec.standard import DEFAULT_VERSION, standard

__all__ = ["CODES", "LintError", "LintFinding", "LintResult", "lint_paths", "lint_source"]

_IGNORE = re.compile(r"#\s*porter:\s*ignore(?:\[([\w\s,]*)\])?")
#: directories never searched (virtual environments, caches, version control)
_SKIP_DIRS = frozenset(
    {".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", ".ipynb_checkpoints",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", ".tox"}
)  # fmt: skip
#: cell magics whose body is Python: the rest (%%bash, %%html…) are not linted
_PYTHON_CELL_MAGICS = frozenset({"port", "time", "timeit", "capture", "prun"})


class LintError(ValueError):
    """A path that cannot be linted (missing, unreadable, not a notebook); one line."""


@dataclass(frozen=True)
class LintFinding:
    """One finding: where (``cell`` is the notebook's code-cell index, 0-based over all
    cells; ``line`` is 1-based within the cell or file, ``col`` 0-based) and what."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    kind: str
    name: str
    message: str
    suggestion: str | None
    needs_run: bool
    cell: int | None = None

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "cell": self.cell,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "code": self.code,
            "kind": self.kind,
            "name": self.name,
            "message": self.message,
            "suggestion": self.suggestion,
            "needs_run": self.needs_run,
        }

    @property
    def where(self) -> str:
        cell = f"[cell {self.cell}]" if self.cell is not None else ""
        return f"{self.path}{cell}:{self.line}:{self.col + 1}"


@dataclass
class LintResult:
    """Every finding of one ``porter lint`` run, and the files it read."""

    findings: list[LintFinding]
    files: int
    errors: list[str]

    @property
    def failed(self) -> bool:
        """Findings that fail a CI run: all but the "needs a run" notes."""
        return any(not f.needs_run for f in self.findings)


def _ignored(line_text: str) -> frozenset[str] | None:
    """The codes a line's ``# porter: ignore[...]`` silences; {"*"} for all; None: none."""
    match = _IGNORE.search(line_text)
    if match is None:
        return None
    if match.group(1) is None:
        return frozenset({"*"})
    return frozenset(c.strip() for c in match.group(1).split(",") if c.strip())


def _keep(site: Site, lines: list[str]) -> bool:
    for number in range(site.line, site.end_line + 1):
        if number - 1 >= len(lines):
            break
        codes = _ignored(lines[number - 1])
        if codes is not None and ("*" in codes or site.code in codes or site.kind in codes):
            return False
    return True


def lint_source(
    source: str,
    path: str = "<source>",
    *,
    version: str = DEFAULT_VERSION,
    imports: dict[str, str] | None = None,
    cell: int | None = None,
) -> list[LintFinding]:
    """Findings in one piece of Python source; ``imports`` adds names bound elsewhere
    (earlier notebook cells). A syntax error is one finding-free `LintError`."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        where = f"{path}[cell {cell}]" if cell is not None else path
        raise LintError(f"{where}:{exc.lineno}: syntax error: {exc.msg}") from None
    names = collect_imports(tree, dict(imports or {}))
    sites = Analyzer(names, standard(version)).run(tree)
    lines = source.splitlines()
    return [
        LintFinding(
            path,
            s.line,
            s.col,
            s.end_line,
            s.end_col,
            s.code,
            s.kind,
            s.name,
            s.message,
            s.suggestion,
            s.needs_run,
            cell,
        )  # fmt: skip
        for s in sorted(sites, key=lambda s: (s.line, s.col, s.code))
        if _keep(s, lines)
    ]


def _cell_python(source: str) -> str | None:
    """A notebook cell's source as Python: IPython line magics and shell escapes become
    blank lines (line numbers kept); a cell magic other than the Python ones: None."""
    lines = source.splitlines()
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("%%"):
        magic = first.lstrip()[2:].split(None, 1)[0] if first.strip() != "%%" else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return None
    out = []
    for line in lines:
        stripped = line.lstrip()
        out.append("" if stripped.startswith(("%", "!")) else line)
    return "\n".join(out)


def _notebook_cells(path: Path) -> list[tuple[int, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cells = data["cells"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise LintError(f"cannot read {path}: not a notebook ({type(exc).__name__})") from None
    found = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        python = _cell_python(source)
        if python is not None:
            found.append((index, python))
    return found


def lint_file(path: Path, *, version: str = DEFAULT_VERSION) -> tuple[list[LintFinding], list[str]]:
    """Findings in one ``.py`` file or notebook, and the cells that could not be parsed."""
    shown = str(path)
    if path.suffix == ".ipynb":
        cells = _notebook_cells(path)
        imports: dict[str, str] = {}
        parsed = []
        errors = []
        for index, python in cells:
            try:
                parsed.append((index, python, ast.parse(python)))
            except SyntaxError as exc:
                errors.append(f"{shown}[cell {index}]:{exc.lineno}: syntax error: {exc.msg}")
        for _, _, tree in parsed:
            collect_imports(tree, imports)
        findings = []
        for index, python, _ in parsed:
            findings += lint_source(python, shown, version=version, imports=imports, cell=index)
        return findings, errors
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LintError(f"cannot read {path}: {exc}") from None
    try:
        return lint_source(source, shown, version=version), []
    except LintError as exc:
        return [], [str(exc)]


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """The ``.py`` files and notebooks under ``paths``, each once, in a stable order."""
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise LintError(f"cannot lint {path}: no such file or directory")
        if path.is_dir():
            candidates = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in (".py", ".ipynb")
                and p.is_file()
                and not any(part in _SKIP_DIRS for part in p.relative_to(path).parts[:-1])
            )
        else:
            candidates = [path]
        for candidate in candidates:
            resolved = candidate.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield candidate


def lint_paths(paths: Iterable[str | Path], *, version: str = DEFAULT_VERSION) -> LintResult:
    """Lint every file under ``paths``; files that do not parse are reported in ``errors``."""
    findings: list[LintFinding] = []
    errors: list[str] = []
    count = 0
    for path in iter_files(paths):
        count += 1
        found, failed = lint_file(path, version=version)
        findings += found
        errors += failed
    return LintResult(findings, count, errors)
