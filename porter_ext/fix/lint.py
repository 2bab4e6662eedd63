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
(it would rescan the whole walk's objects, again and again), a call judged once for all
its repeats, and a module-level statement the file writes again word for word parsed and
walked once (`porter_ext.fix.repeated`). Only regular files are read: a FIFO, device
or socket named on the command line is a usage error; one found in a directory is
skipped with its reason.
"""

from __future__ import annotations

import ast
import gc
import heapq
import marshal
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, overload

from porter_ext.fix.checks import CODES, Analyzer, Site
from porter_ext.fix.lint_recorded import Recorded, RecordedFile
from porter_ext.fix.notebook_input import NotebookError, check_cells, load_json
from porter_ext.fix.repeated import Repeated, Spliced, starts_statement
from porter_ext.fix.static import collect_imports
from porter_ext.model.records import fields_of
from porter_ext.record.positions import Columns
from porter_ext.record.spelled import source_call, span_text
from porter_ext.spec.rewrites import suggestion_from_source
from porter_ext.spec.standard import DEFAULT_VERSION, standard

__all__ = [
    "CODES",
    "LintError",
    "LintFinding",
    "LintResult",
    "LintRun",
    "lint_paths",
    "lint_source",
]

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


def _keep(site: Site, lines: Sequence[str]) -> bool:
    for number in range(site.line, site.end_line + 1):
        if number - 1 >= len(lines):
            break
        codes = _ignored(lines[number - 1])
        if codes is not None and ("*" in codes or site.code in codes or site.kind in codes):
            return False
    return True


#: lines per piece a big file is parsed in (cut only where a top-level statement starts)
PIECE_LINES = 2000
#: findings of a file held in memory until its end (see `_Held`); past this many they
#: wait in a temporary file
HOLD_MAX = 20_000
#: bytes of a file read at a time
_CHUNK = 1 << 20


class _Window:
    """A piece's lines indexed as in the whole source: ``window[n - 1]`` is the source's
    line n (for the piece's lines), ``len(window)`` the source's lines up to the piece's
    end; what the findings' helpers (`_keep`, `Columns`, `span_text`) read."""

    __slots__ = ("first", "lines")

    def __init__(self, lines: list[str], first: int) -> None:
        self.lines, self.first = lines, first  # ``first``: the source's lines before them

    def __len__(self) -> int:
        return self.first + len(self.lines)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            stop = None if index.stop is None else max(index.stop - self.first, 0)
            return self.lines[max((index.start or 0) - self.first, 0) : stop]
        if index < self.first:
            raise IndexError(index)
        return self.lines[index - self.first]


def _pieces(
    lines: Iterator[str], repeated: Repeated | None = None
) -> Iterator[tuple[ast.Module, _Window, Spliced]]:
    """The module parsed piece by piece as its lines come, each piece's tree numbered from
    1 and its lines (`_Window`) placed in the file: a big file's tree, and its text, are
    never held whole. A cut that splits a statement (a string, a bracket, a decorator)
    does not parse, and the piece grows until it does. With ``repeated``, statements the
    file wrote before word for word are cut out of the tree and come beside it, each to be
    walked at its line (`porter_ext.fix.repeated`)."""
    buffer: list[str] = []
    start = 0
    ended = False

    def fill(count: int) -> bool:
        """At least ``count`` lines in the buffer (False: the source has fewer)."""
        nonlocal ended
        while len(buffer) < count and not ended:
            line = next(lines, None)
            if line is None:
                ended = True
            else:
                buffer.append(line)
        return len(buffer) >= count

    while True:
        size = PIECE_LINES
        while True:
            end = _cut(buffer, size, fill)
            try:
                if repeated is None:
                    tree, spliced = ast.parse("\n".join(buffer[:end])), []
                else:
                    tree, spliced = repeated.parse(buffer[:end])
                break
            except SyntaxError as exc:
                if not fill(end + 1):
                    if exc.lineno is not None:
                        exc.lineno += start
                    raise
                size *= 2
        piece = buffer[:end]
        del buffer[:end]
        yield tree, _Window(piece, start), spliced
        start += end
        if not fill(1):
            return


def _cut(buffer: list[str], at: int, fill: Callable[[int], bool]) -> int:
    """The first line from ``at`` on that may start a top-level statement (or the end)."""
    number = at
    while fill(number + 1):
        if starts_statement(buffer[number]):
            return number
        number += 1
    return len(buffer)


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


class SourceError(LintError):
    """A file or cell that does not parse (or holds what no source may): reported with
    the run's errors, the other files linted."""


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
        return line, _NUL
    return line, (
        f"a lone surrogate (U+{ord(source[at]):04X}), text that is not valid Unicode: "
        "save the source as UTF-8"
    )


_NUL = "a NUL character (\\x00) in the source: remove it"


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
        raise SourceError(f"{_where(path, cell)}:{odd[0]}: {odd[1]}")
    arrays = recorded.arrays(source) if recorded is not None else None
    analyzer = Analyzer(dict(imports or {}), standard(version), arrays)
    found = list(_walk(iter(source.split("\n")), analyzer, path, cell))
    if recorded is not None:  # columns of recorded calls already count characters
        found += [LintFinding.of(s, path, cell, s.suggestion) for s in recorded.missed(found)]
        found.sort(key=lambda f: (f.line, f.col, f.code))
    return found


def _order(site: Site) -> tuple[int, int, str]:
    return site.line, site.col, site.code


def _walk(
    lines: Iterator[str], analyzer: Analyzer, path: str, cell: int | None
) -> Iterator[LintFinding]:
    """The findings of a module whose lines come from ``lines``, in order, each yielded
    once its piece is walked. A module-level function is judged where it is defined, and
    again at the end if a later line changed a name it reads: from the first such
    function on, the findings wait for the end of the module (`_Held`)."""
    held: _Held | None = None
    repeated = None if analyzer.results or analyzer.receivers else Repeated(analyzer)
    with _collector_paused():
        try:
            for tree, window, spliced in _pieces(lines, repeated):
                sites: list[Site] = []
                known = len(analyzer.records)
                analyzer.line_offset = window.first
                analyzer.feed(tree, sites, window, spliced)
                del tree, spliced
                if held is None and not analyzer.records:
                    sites.sort(key=_order)
                    yield from _findings(sites, window, path, cell)
                    continue
                if held is None:
                    held = _Held(path, cell)
                owner = [0] * len(sites)  # the function each finding was made in (its id)
                for record in analyzer.records[known:]:
                    owner[record.start : record.end] = [id(record)] * (record.end - record.start)
                order = sorted(range(len(sites)), key=lambda i: _order(sites[i]))
                columns = Columns(lines=window)
                for i in order:
                    found = _finding(sites[i], window, columns, path, cell)
                    if found is not None:
                        held.add(owner[i], found)
                sites.clear()  # the records' lists: let their sites go
            failed = analyzer.failing()
            if held is None:
                return
            gone = {id(record) for record in failed}
            again: list[tuple[Site, _Window]] = []
            for record in failed:
                sites = []
                analyzer.rewalk(record, sites)
                window = _Window((record.text or "").split("\n"), record.where[0] - 1)
                again += [(site, window) for site in sites]
            again.sort(key=lambda pair: _order(pair[0]))
            redone = [
                found
                for site, window in again
                if (found := _finding(site, window, Columns(lines=window), path, cell))
            ]
            kept = (found for owner_id, found in held.drain() if owner_id not in gone)
            yield from heapq.merge(kept, redone, key=_order)  # type: ignore[arg-type]
        except SyntaxError as exc:
            raise SourceError(
                f"{_where(path, cell)}:{exc.lineno}: syntax error: {exc.msg}"
            ) from None
        except RecursionError:
            raise SourceError(f"{_where(path, cell)}: nested too deeply to lint") from None
        finally:
            if held is not None:
                held.close()


class _Held:
    """A module's findings from its first module-level function on, in order, each with
    the function it was made in (0: none), held to the module's end: a later line may
    change a name a function reads, and its findings are then made again. Past
    `HOLD_MAX` they wait in a temporary file, so memory does not grow with the file."""

    def __init__(self, path: str, cell: int | None) -> None:
        self.path, self.cell = path, cell
        self.items: list[tuple[int, LintFinding]] = []
        self.file: IO[bytes] | None = None
        #: table entries and option tuples by number, as the file stores them
        self.objects: list[object] = []
        self.numbers: dict[object, int] = {}

    def add(self, owner: int, found: LintFinding) -> None:
        self.items.append((owner, found))
        if len(self.items) >= HOLD_MAX:
            self._spill()

    def _number(self, value: object) -> int:
        if value is None or value == ():
            return -1
        number = self.numbers.get(value)
        if number is None:
            number = self.numbers[value] = len(self.objects)
            self.objects.append(value)
        return number

    def _spill(self) -> None:
        if self.file is None:
            # closed by `close`, when the module ends (or its walk is abandoned)
            self.file = tempfile.TemporaryFile(prefix="porter-lint-")  # noqa: SIM115
        rows = [
            (owner, *_plain(f), self._number(f.entry), self._number(f.options))
            for owner, f in self.items
        ]
        marshal.dump(rows, self.file)
        self.items = []

    def drain(self) -> Iterator[tuple[int, LintFinding]]:
        """Every finding held, in order (the temporary file's first)."""
        if self.file is not None:
            self.file.seek(0)
            while True:
                try:
                    rows = marshal.load(self.file)
                except EOFError:
                    break
                for owner, *plain, entry, options in rows:
                    yield owner, self._finding(plain, entry, options)
        yield from self.items

    def _finding(self, plain: list, entry: int, options: int) -> LintFinding:
        line, col, end_line, end_col, code, name, message, suggestion, needs_run, undecided = plain
        return LintFinding(
            line,
            col,
            end_line,
            end_col,
            code,
            name,
            message,
            suggestion,
            needs_run,
            self.objects[entry] if entry >= 0 else None,  # type: ignore[arg-type]
            undecided,
            self.objects[options] if options >= 0 else (),  # type: ignore[arg-type]
            path=self.path,
            cell=self.cell,
        )

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _plain(f: LintFinding) -> tuple:
    """A finding's fields that `marshal` writes as they are."""
    return (
        f.line,
        f.col,
        f.end_line,
        f.end_col,
        f.code,
        f.name,
        f.message,
        f.suggestion,
        f.needs_run,
        f.undecided,
    )


def _findings(
    sites: list[Site], lines: Sequence[str], path: str, cell: int | None
) -> Iterator[LintFinding]:
    """``sites`` (in order) as findings, ignored ones dropped."""
    columns = Columns(lines=lines)
    for site in sites:
        found = _finding(site, lines, columns, path, cell)
        if found is not None:
            yield found


def _finding(
    site: Site, lines: Sequence[str], columns: Columns, path: str, cell: int | None
) -> LintFinding | None:
    """The site as a finding, its columns as editors count them and its suggestion
    spelled with the call's expressions; None where a ``# porter: ignore`` drops it."""
    if site.line == site.end_line:  # most sites: one line, read once
        text = lines[site.line - 1] if site.line <= len(lines) else ""
        if "#" in text and not _keep(site, lines):
            return None
        if text.isascii():
            col, end_col = site.col, site.end_col
        else:
            col, end_col = columns(site.line, site.col), columns(site.line, site.end_col)
    elif not _keep(site, lines):
        return None
    else:
        col, end_col = columns(site.line, site.col), columns(site.end_line, site.end_col)
    return LintFinding(
        site.line,
        col,
        site.end_line,
        end_col,
        site.code,
        site.name,
        site.message,
        _spelled(site, lines, col, end_col),
        site.needs_run,
        site.entry,
        site.undecided,
        site.options,
        path=path,
        cell=cell,
    )


#: spelled suggestions by what decides them (the table entries, the suggestion, the
#: call's text): a call written the same way many times is parsed and rendered once;
#: cleared when full. The entries are told apart by identity, cheaper than hashing them,
#: and held by the value, so that an id is never another object's while it is kept.
_SPELLED: dict[tuple, tuple[object, object, str | None]] = {}
_SPELLED_MAX = 4096


def _spelled(site: Site, lines: Sequence[str], col: int, end_col: int) -> str | None:
    """The site's suggestion written with the call's own expressions (columns ``col`` and
    ``end_col`` in characters), as ``%%port`` records it (`porter_ext.record.spelled`); as
    rendered from what the source shows of the values where the table entry is undecided
    or the source does not fill it."""
    entry, options, suggestion = site.entry, site.options, site.suggestion
    if suggestion is None or (entry is None and not options):
        return suggestion
    text = span_text(lines, site.line, col, site.end_line, end_col)
    key = (id(entry), id(options), suggestion, text)
    known = _SPELLED.get(key)
    if known is None:
        entries = [entry] if entry is not None else list(options)
        rendered = suggestion.split(" or ") if entry is None else [suggestion]
        spelled = (
            _spelled_from(text, entries, rendered, suggestion)
            if len(rendered) == len(entries)
            else suggestion
        )
        if len(_SPELLED) >= _SPELLED_MAX:
            _SPELLED.clear()
        known = _SPELLED[key] = (entry, options, spelled)
    return known[2]


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


def _open(path: Path) -> IO[bytes]:
    """A regular file, open for reading. Anything else (a FIFO, a device, a socket) is
    never read, and the file is opened without waiting (a FIFO put in its place since)."""
    try:
        kind = _not_regular(os.stat(path).st_mode)
        fd = None if kind else os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise LintError(f"cannot read {path}: {exc.strerror or exc}") from None
    if fd is not None:
        file = os.fdopen(fd, "rb")
        kind = _not_regular(os.fstat(fd).st_mode)
        if not kind:
            return file
        file.close()
    raise NotRegularFile(f"{path}: not a regular file ({kind})")


def _read(path: Path) -> str:
    """A regular file's whole text (`_open`), as UTF-8."""
    with _open(path) as file:
        data = file.read()
    return _decoded(data, 0, path)


def _decoded(data: bytes, at: int, path: Path) -> str:
    """``data``, found at byte ``at`` of the file, as UTF-8; a byte that is not UTF-8 is a
    `LintError` naming its place in the file."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start, end = at + exc.start, at + exc.end
        what = (
            f"byte 0x{data[exc.start]:02x} in position {start}"
            if exc.end - exc.start == 1
            else f"bytes in position {start}-{end - 1}"
        )
        message = f"'{exc.encoding}' codec can't decode {what}: {exc.reason}"
        raise LintError(f"cannot read {path}: {message}") from None


def _texts(path: Path) -> Iterator[str]:
    """A regular file's text a chunk at a time, each cut after a line break (the last at
    the end), as UTF-8: a big file is never held whole."""
    with _open(path) as file:
        at, rest = 0, b""
        while data := file.read(_CHUNK):
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut:
                yield _decoded(data[:cut], at, path)
            at, rest = at + cut, data[cut:]
        yield _decoded(rest, at, path)


def _file_lines(path: Path) -> Iterator[str]:
    """A regular file's lines, as ``text.split("\n")`` gives them (`_texts`)."""
    carry = ""
    for text in _texts(path):
        lines = text.split("\n")
        lines[0] = carry + lines[0]
        carry = lines.pop()
        yield from lines
    yield carry


def _checked(path: Path) -> str | None:
    """The file read through once before it is linted, so that its findings are never
    followed by a refusal of the whole file: a byte that is not UTF-8 is a `LintError`
    (`_decoded`); the first NUL, which no source may hold, is returned as the file's
    error (None: none)."""
    line, nul = 1, None
    for text in _texts(path):
        at = text.find("\x00")
        if nul is None and at >= 0:
            nul = f"{path}:{line + text.count(chr(10), 0, at)}: {_NUL}"
        line += text.count("\n")
    return nul


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
    with _collector_paused():
        try:
            for _, lines, tree, sites in parsed:
                analyzer.feed(tree, sites, lines)
            analyzer.finish()
        except RecursionError:
            return [], [*errors, f"{shown}: nested too deeply to lint"]
        findings = []
        for index, lines, _, sites in parsed:
            sites.sort(key=_order)
            findings += _findings(sites, lines, shown, index)
    return findings, errors


def _lint_py(path: Path, version: str, recorded: Recorded | None) -> Iterator[LintFinding]:
    """A ``.py`` file's findings as they are made, read a chunk at a time; with what a
    run recorded in it, read whole (the records are matched against its text)."""
    known = recorded.for_path(path) if recorded is not None else None
    if known is not None:
        yield from lint_source(_read(path), str(path), version=version, recorded=known)
        return
    odd = _checked(path)
    if odd is not None:
        raise SourceError(odd)
    yield from _walk(_file_lines(path), Analyzer({}, standard(version)), str(path), None)


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


class LintRun:
    """One ``porter lint`` over ``paths``, as it goes: iterating `findings` lints the files
    in turn and yields each finding as it is made (a big ``.py`` file's first ones before
    it is read to its end), so a printer writes them out without holding them. `files`
    and `skipped` (files found in a directory that are not regular ones) are known from
    the start; `errors` (files and cells that do not parse) and the counts once
    `findings` is exhausted. A file that cannot be read (not UTF-8) is a `LintError`."""

    def __init__(
        self,
        paths: Iterable[str | Path],
        *,
        version: str = DEFAULT_VERSION,
        recorded: Recorded | None = None,
    ) -> None:
        self.version, self.recorded = version, recorded
        self.targets: list[Path] = []
        self.skipped: list[str] = []
        for path in iter_files(paths):
            try:
                kind = _not_regular(os.stat(path).st_mode)
            except OSError:
                kind = None  # reading it says why not
            if kind is None:
                self.targets.append(path)
            else:
                self.skipped.append(f"{path}: not a regular file ({kind})")
        self.files = len(self.targets)
        self.errors: list[str] = []
        self.found = self.notes = 0  # findings that fail a CI run, and notes
        self.findings: Iterator[LintFinding] = self._each()

    @property
    def failed(self) -> bool:
        """Findings that fail a CI run: all but the "needs a run" notes."""
        return self.found > 0

    def _each(self) -> Iterator[LintFinding]:
        for path in self.targets:
            try:
                if path.suffix == ".ipynb":
                    found, failed = _lint_notebook(path, self.version)
                    self.errors += failed
                    made: Iterable[LintFinding] = found
                else:
                    made = _lint_py(path, self.version, self.recorded)
                for finding in made:
                    if finding.needs_run:
                        self.notes += 1
                    else:
                        self.found += 1
                    yield finding
            except (SourceError, NotRegularFile) as exc:  # a FIFO put in its place since
                self.errors.append(str(exc))


def lint_paths(
    paths: Iterable[str | Path],
    *,
    version: str = DEFAULT_VERSION,
    recorded: Recorded | None = None,
) -> LintResult:
    """Lint every file under ``paths`` into one list (`LintRun` yields them as they come);
    files that do not parse are reported in ``errors``, files that are not regular ones
    (a FIFO found in a directory) in ``skipped``; ``recorded``: what a run's report
    recorded in the person's files (``--from-report``)."""
    run = LintRun(paths, version=version, recorded=recorded)
    findings = list(run.findings)
    return LintResult(findings, run.files, run.errors, run.skipped)
