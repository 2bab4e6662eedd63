"""``porter lint``: the replacement catalogue applied to source without running it.

For pre-commit and CI. Each ``.py`` file (directories are searched for them and for
notebooks) and each notebook's code cells, in order, are parsed and walked once
(`porter_ext.fix.checks`): a name is what the statements before its use made it
(`porter_ext.fix.flow`: a list appended to before it becomes a tensor is a list there;
after a branch, only what is an array on every path counts as one). Names are resolved
from the imports, so ``np.X`` is numpy's ``X`` after ``import numpy as np`` (in a
notebook, the imports of every cell count). A finding on a line carrying
``# porter: ignore`` (every code) or ``# porter: ignore[PA001,host_sync]`` (those codes,
by code or name) is dropped.

Time and memory are linear in the file's size: a big file is parsed in pieces cut
between top-level statements and walked as it is parsed, the garbage collector paused
(it would rescan the whole walk's objects, again and again), and a call judged once for
all its repeats. Only regular files are read: a FIFO, device or socket named on the
command line is a usage error; one found in a directory is skipped with its reason.
"""

from __future__ import annotations

import ast
import gc
import os
import re
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from porter_ext.fix.checks import CODES, Analyzer, Site
from porter_ext.fix.lint_recorded import Recorded, RecordedFile
from porter_ext.fix.notebook_input import NotebookError, check_cells, load_json
from porter_ext.fix.static import collect_imports
from porter_ext.model.records import fields_of
from porter_ext.record.positions import in_characters
from porter_ext.record.spelled import source_call, span_text
from porter_ext.spec.rewrites import suggestion_from_source
from porter_ext.spec.standard import DEFAULT_VERSION, standard

__all__ = ["CODES", "LintError", "LintFinding", "LintResult", "lint_paths", "lint_source"]

_IGNORE = re.compile(r"#\s*porter:\s*ignore(?:\[([\w\s,]*)\])?")
#: directories never searched (virtual environments, caches, version control)
_SKIP_DIRS = frozenset(
    (".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", ".ipynb_checkpoints")
    + (".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", ".tox")
)
#: cell magics whose body is Python: the rest (%%bash, %%html…) are not linted
_PYTHON_CELL_MAGICS = frozenset({"port", "time", "timeit", "capture", "prun"})


class LintError(ValueError):
    """A path that cannot be linted (missing, unreadable, not a notebook); one line."""


class NotRegularFile(LintError):
    """A file that is not a regular one (a FIFO, a device, a socket): never read."""


@dataclass(frozen=True, slots=True)
class LintFinding(Site):
    """A static check's site as ``porter lint`` reports it: in ``path`` (``cell``, the
    notebook's code-cell index, 0-based over all cells; ``line`` 1-based within the cell
    or file, ``col`` 0-based in characters), its suggestion spelled with the call's own
    expressions."""

    path: str = field(kw_only=True)
    cell: int | None = field(default=None, kw_only=True)

    @classmethod
    def of(cls, site: Site, path: str, cell: int | None, suggestion: str | None) -> LintFinding:
        """``site`` found in ``path`` (and ``cell``), suggesting ``suggestion``."""
        shared = fields_of(site, Site)
        return cls(**{**shared, "suggestion": suggestion}, path=path, cell=cell)

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
    #: files found in a directory and not read (not regular files), each with the reason
    skipped: list[str] = field(default_factory=list)

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


#: lines per piece a big file is parsed in (cut only where a top-level statement starts)
PIECE_LINES = 2000
#: lines that start at column 0 but continue the statement before them
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")


def _cut(lines: list[str], at: int) -> int:
    """The first line from ``at`` on that may start a top-level statement (or the end)."""
    for number in range(at, len(lines)):
        line = lines[number]
        if line[:1] not in _NOT_A_START and not _CONTINUES.match(line):
            return number
    return len(lines)


_NOT_A_START = frozenset({"", " ", "\t", "\f", "\r", "#", ")", "]", "}"})


def _pieces(lines: list[str]) -> Iterator[ast.Module]:
    """The module parsed piece by piece, each piece's lines numbered as in the file: a
    big file's tree is never held whole. A cut that splits a statement (a string, a
    bracket, a decorator) does not parse, and the piece grows until it does."""
    start = 0
    while True:
        size = PIECE_LINES
        while True:
            end = _cut(lines, start + size)
            try:
                tree = ast.parse("\n" * start + "\n".join(lines[start:end]))
                break
            except SyntaxError:
                if end >= len(lines):
                    raise
                size *= 2
        yield tree
        if end >= len(lines):
            return
        start = end


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a file is walked: the walk makes millions of
    objects that hold no cycles, and every full collection would scan them all again
    (the time then grows with the square of the file)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _where(path: str, cell: int | None) -> str:
    return f"{path}[cell {cell}]" if cell is not None else path


def _not_python_text(source: str) -> tuple[int, str] | None:
    """``(line, what)`` for the first character no Python source may hold: a NUL, or a
    lone surrogate (a byte that was not UTF-8, or an escape in a notebook's JSON), which
    the parser refuses with an error of its own; None for text it can read."""
    nul = source.find("\x00")
    try:
        source.encode("utf-8")
        bad = -1
    except UnicodeEncodeError as exc:
        bad = exc.start
    if nul < 0 and bad < 0:
        return None
    at = min(i for i in (nul, bad) if i >= 0)
    line = source.count("\n", 0, at) + 1
    if at == nul:
        return line, "a NUL character (\\x00) in the source: remove it"
    return line, (
        f"a lone surrogate (U+{ord(source[at]):04X}), text that is not valid Unicode: "
        "save the source as UTF-8"
    )


def lint_source(
    source: str,
    path: str = "<source>",
    *,
    version: str = DEFAULT_VERSION,
    imports: dict[str, str] | None = None,
    cell: int | None = None,
    recorded: RecordedFile | None = None,
) -> list[LintFinding]:
    """Findings in one piece of Python source; ``imports`` adds names bound elsewhere
    (earlier notebook cells), ``recorded`` what a run recorded inside it (its arrays'
    library, and findings the source alone misses). A syntax error is one finding-free
    `LintError`."""
    odd = _not_python_text(source)
    if odd is not None:
        raise LintError(f"{_where(path, cell)}:{odd[0]}: {odd[1]}")
    lines = source.split("\n")
    arrays = recorded.arrays(source) if recorded is not None else None
    analyzer = Analyzer(dict(imports or {}), standard(version), arrays)
    sites: list[Site] = []
    with _collector_paused():
        try:
            for tree in _pieces(lines):
                analyzer.feed(tree, sites, lines)
            analyzer.finish()
        except SyntaxError as exc:
            raise LintError(f"{_where(path, cell)}:{exc.lineno}: syntax error: {exc.msg}") from None
        except RecursionError:
            raise LintError(f"{_where(path, cell)}: nested too deeply to lint") from None
        found = _findings(sites, lines, path, cell)
        if recorded is not None:  # columns of recorded calls already count characters
            found += [LintFinding.of(s, path, cell, s.suggestion) for s in recorded.missed(found)]
            found.sort(key=lambda f: (f.line, f.col, f.code))
        return found


def _findings(
    sites: list[Site], lines: list[str], path: str, cell: int | None
) -> list[LintFinding]:
    sites.sort(key=lambda s: (s.line, s.col, s.code))
    return [
        LintFinding.of(s, path, cell, _spelled(s, lines))
        for s in in_characters(sites, lines)  # columns as editors count them
        if _keep(s, lines)
    ]


#: spelled suggestions by what decides them (entries, suggestion, the call's text): a
#: call written the same way many times is parsed and rendered once; cleared when full
_SPELLED: dict[tuple, str | None] = {}
_SPELLED_MAX = 4096


def _spelled(site: Site, lines: list[str]) -> str | None:
    """The site's suggestion written with the call's own expressions, as ``%%port``
    records it (`porter_ext.record.spelled`); as rendered from what the source shows of
    the values where the table entry is undecided or the source does not fill it."""
    entries = [site.entry] if site.entry is not None else list(site.options)
    if not entries or site.suggestion is None:
        return site.suggestion
    rendered = site.suggestion.split(" or ") if site.entry is None else [site.suggestion]
    if len(rendered) != len(entries):
        return site.suggestion
    text = span_text(lines, site.line, site.col, site.end_line, site.end_col)
    key = (*entries, site.suggestion, text)
    if key not in _SPELLED:
        if len(_SPELLED) >= _SPELLED_MAX:
            _SPELLED.clear()
        _SPELLED[key] = _spelled_from(text, entries, rendered, site.suggestion)
    return _SPELLED[key]


def _spelled_from(text: str, entries: list, rendered: list[str], suggestion: str) -> str | None:
    call = source_call(text, entries[0].kind) if text else None
    if call is None:
        return suggestion
    spelled = [
        suggestion_from_source(entry.suggestion, call, entry) or value
        for entry, value in zip(entries, rendered, strict=True)
    ]
    return " or ".join(spelled)


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


def _read(path: Path) -> str:
    """A regular file's text. Anything else (a FIFO, a device, a socket) is never read,
    and the file is opened without waiting (a FIFO put in its place since)."""
    try:
        kind = _not_regular(os.stat(path).st_mode)
        fd = None if kind else os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise LintError(f"cannot read {path}: {exc.strerror or exc}") from None
    if fd is not None:
        with os.fdopen(fd, "rb") as file:
            kind = _not_regular(os.fstat(fd).st_mode)
            data = b"" if kind else file.read()
    if kind:
        raise NotRegularFile(f"{path}: not a regular file ({kind})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LintError(f"cannot read {path}: {exc}") from None


def _not_regular(mode: int) -> str | None:
    """What a file that is not a regular one is (None for a regular file)."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a file porter reads"


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _notebook_cells(path: Path) -> list[tuple[int, str]]:
    text = _read(path)
    try:
        data = load_json(text, path)
        check_cells(data, path)
        cells = data["cells"]
    except NotebookError as exc:
        raise LintError(str(exc)) from None
    except (KeyError, TypeError) as exc:  # an older format: its cells are in worksheets
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


def _lint_notebook(path: Path, version: str) -> tuple[list[LintFinding], list[str]]:
    """The code cells walked in order, as one module: a name is what the cells above it
    made it; the imports of every cell count (cells are often run out of order)."""
    shown = str(path)
    parsed = []
    errors = []
    imports: dict[str, str] = {}
    for index, python in _notebook_cells(path):
        odd = _not_python_text(python)
        if odd is not None:
            errors.append(f"{shown}[cell {index}]:{odd[0]}: {odd[1]}")
            continue
        try:
            tree = ast.parse(python)
        except SyntaxError as exc:
            errors.append(f"{shown}[cell {index}]:{exc.lineno}: syntax error: {exc.msg}")
            continue
        collect_imports(tree, imports)
        parsed.append((index, python.split("\n"), tree, []))
    analyzer = Analyzer(imports, standard(version))
    try:
        for _, lines, tree, sites in parsed:
            analyzer.feed(tree, sites, lines)
        analyzer.finish()
    except RecursionError:
        return [], [*errors, f"{shown}: nested too deeply to lint"]
    findings = []
    for index, lines, _, sites in parsed:
        findings += _findings(sites, lines, shown, index)
    return findings, errors


def lint_file(
    path: Path, *, version: str = DEFAULT_VERSION, recorded: Recorded | None = None
) -> tuple[list[LintFinding], list[str]]:
    """Findings in one ``.py`` file or notebook, and the cells that could not be parsed;
    ``recorded``: what a run's report recorded in the person's files."""
    with _collector_paused():
        if path.suffix == ".ipynb":
            return _lint_notebook(path, version)
        source = _read(path)
        known = recorded.for_path(path) if recorded is not None else None
        try:
            return lint_source(source, str(path), version=version, recorded=known), []
        except LintError as exc:
            return [], [str(exc)]


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """The ``.py`` files and notebooks under ``paths``, each once, in a stable order. A path
    named that is neither a directory nor a regular file is a `LintError` (before any
    file is read); one found in a directory is yielded, and `lint_paths` skips it."""
    named = [Path(raw) for raw in paths]
    for path in named:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise LintError(f"cannot lint {path}: no such file or directory") from None
        except OSError as exc:
            raise LintError(f"cannot lint {path}: {exc.strerror or exc}") from None
        kind = _not_regular(mode)
        if kind is not None and not stat.S_ISDIR(mode):
            raise LintError(f"cannot lint {path}: not a regular file ({kind})")
    seen: set[Path] = set()
    for path in named:
        if path.is_dir():
            candidates = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in (".py", ".ipynb")
                and p.exists()  # not a dangling link
                and not p.is_dir()
                and not any(part in _SKIP_DIRS for part in p.relative_to(path).parts[:-1])
            )
        else:
            candidates = [path]
        for candidate in candidates:
            resolved = candidate.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield candidate


def lint_paths(
    paths: Iterable[str | Path],
    *,
    version: str = DEFAULT_VERSION,
    recorded: Recorded | None = None,
) -> LintResult:
    """Lint every file under ``paths``; files that do not parse are reported in ``errors``,
    files that are not regular ones (a FIFO found in a directory) in ``skipped``;
    ``recorded``: what a run's report recorded in the person's files (``--from-report``)."""
    result = LintResult([], 0, [])
    for path in iter_files(paths):
        try:
            found, failed = lint_file(path, version=version, recorded=recorded)
        except NotRegularFile as exc:
            result.skipped.append(str(exc))
            continue
        result.files += 1
        result.findings += found
        result.errors += failed
    return result
