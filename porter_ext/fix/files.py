"""``porter fix`` of the person's Python files: a module's rewrite, verified by replaying
the recorded cells that call into it (issue 26, item 3).

A function of ``mymod.py`` that a cell calls records its calls where they are written
(`porter_ext.record.person_code`). Under ``porter fix`` each cell that called into the
file rewrites the whole file with the codemod that rewrites cells (the same for every
cell: the file's source, and the library its recorded calls were made with, decide it),
then replays itself, from its own pre-run inputs, with the rewritten file in place of the
original (`install`: the worker's namespace gets the ported module's functions where it
held the original's), judged against the cell's original run as any rewrite is. Each
calling cell's entry carries its `FileVerdict`; porter's side (`settle_files`) accepts a
file's rewrite only when every cell that called into it verified it, on the specs all of
them verified, and writes ``NAME.ported.py`` beside the original (``--in-place``: over
it, after a backup), never into a file that changed since it was recorded.
"""

from __future__ import annotations

import hashlib
import os
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from porter_ext.model.entries import FileVerdict, RewriteSiteEntry

if TYPE_CHECKING:
    from porter_ext.fix.verify import FixRun
    from porter_ext.fix.verify_rounds import Verification
    from porter_ext.model.cells import CellEntry

__all__ = [
    "FileOutcome",
    "digest",
    "install",
    "overlay",
    "settle_files",
    "verify_files",
    "write_ported",
]


def digest(source: str) -> str:
    """What a file's text is known by (a file that changed since is never written): the
    SHA-256 of its UTF-8 bytes, which a browser computes too (WebCrypto), so a front end
    can tell an edited file before it writes a rewrite."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def _rewrite(source: str, library: str):
    """The file rewritten by the cells' codemod, its array parameters guessed from how
    its functions use them with ``library`` (the replays verify the guess)."""
    from porter_ext.fix.rewrite import rewrite_source

    return rewrite_source(source, arrays=array_parameters_everywhere(source, library))


def array_parameters_everywhere(source: str, library: str) -> dict[str, str]:
    """`deferred.array_parameters` over every function of the file, methods included:
    the names its functions use as arrays of ``library``."""
    import ast

    from porter_ext.fix.deferred import array_parameters

    tree = ast.parse(source)
    functions = {
        node.name: (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):  # a class's methods, as top-level functions
            body = ast.Module([n for n in node.body if isinstance(n, ast.FunctionDef)], [])
            found.update(array_parameters(ast.unparse(body), functions, library))
    found.update(array_parameters(source, functions, library))
    return found


def _calls_by_file(entry: CellEntry) -> dict[str, list]:
    found: dict[str, list] = {}
    for call in entry.calls:
        origin = call.origin
        if origin is not None and origin.file is not None:
            found.setdefault(origin.file, []).append(call)
    return found


def verify_files(fix: FixRun, entry: CellEntry, ctx: Verification) -> list[FileVerdict]:
    """In the kernel, after the cell's run: the verdict of this cell's replays on the
    rewrite of each file of the person's it called into with findings there."""
    from porter_ext.fix.rewrite import CellRewrite
    from porter_ext.record import person_code

    verdicts = []
    for shown, calls in sorted(_calls_by_file(entry).items()):
        if not any(c.flagged for c in calls):
            continue
        real = os.path.realpath(os.path.join(person_code.notebook_folder(), shown))

        def refused(why: str, source: str = "", shown: str = shown) -> FileVerdict:
            return FileVerdict(shown, digest(source), source, False, reason=why, where=entry.label)

        try:
            original = person_code.read_source(real)
        except person_code.Unreadable as why:
            verdicts.append(refused(f"{shown} {why}"))
            continue
        libraries = {c.library for c in calls if c.flagged}
        if len(libraries) != 1:
            verdicts.append(refused(f"its calls mix libraries ({', '.join(sorted(libraries))})"))
            continue
        try:
            rewrite = _rewrite(original, libraries.pop())
        except SyntaxError as exc:
            verdicts.append(refused(f"{shown} does not parse: {exc.msg}", original))
            continue
        applied = [s for s in rewrite.sites if s.replacement is not None]
        if not applied:
            verdicts.append(refused("no call there has a rewrite", original))
            continue
        if ctx.run.exception is not None or not ctx.specs or fix.plan is None:
            why = "the cell raised, so no replay of it can verify the rewrite"
            verdicts.append(refused(why, original))
            continue
        prefix = (
            "__import__('porter_ext.fix.files', fromlist=['install']).install("
            f"globals(), {real!r}, {rewrite.source!r})\n"
        )
        same = CellRewrite(fix.source, fix.source, [])
        # with the earlier cells' rewritten definitions this cell calls (verified after,
        # at this call: the file's rewrite is tried alone where they disagree)
        called = "".join(d.code for d in fix.deferred if d.ran_in(fix.source, entry.calls))
        result = fix.replay(same, frozenset(), ctx, prefix=fix.files_prefix + called + prefix)
        fix.rounds.remove(result)  # the cell's own rewrite is judged on its own rounds
        if not result.accepted and called:
            result = fix.replay(same, frozenset(), ctx, prefix=fix.files_prefix + prefix)
            fix.rounds.remove(result)
        if result.accepted:  # in place for the cell's later rounds
            fix.files_prefix += prefix
            fix.prefix = fix.files_prefix
        sites = [
            RewriteSiteEntry(
                s.line,
                s.col,
                s.name,
                s.original,
                s.replacement,
                applied=result.accepted and s.replacement is not None,
                reason=s.reason,
            )
            for s in rewrite.sites
        ]
        verdicts.append(
            FileVerdict(
                shown,
                digest(original),
                rewrite.source,
                result.accepted,
                verified_on=list(result.verified_on) if result.accepted else [],
                sites=sites,
                reason=None if result.accepted else (result.why or "the replays disagree"),
                where=entry.label,
            )
        )
    return verdicts


def install(namespace: dict, real: str, source: str) -> None:
    """In a verification replay: the ported ``source`` of the person's file ``real`` in
    place of the module loaded from it, for this replay's namespace (its names bound to
    the module or to what it defines are rebound to the ported ones; ``sys.modules``
    stays as it is)."""
    from porter_ext.record import person_code

    old = next(
        (
            m
            for m in list(sys.modules.values())
            if isinstance(getattr(m, "__file__", None), str)
            and os.path.realpath(m.__file__) == real
        ),
        None,
    )
    name = old.__name__ if old is not None else Path(real).stem
    new = types.ModuleType(name, getattr(old, "__doc__", None))
    new.__file__ = real
    new.__package__ = getattr(old, "__package__", None)
    person_code.also_written(real, source)  # its functions record their calls too
    exec(compile(source, real, "exec", dont_inherit=True), new.__dict__)  # noqa: S102
    for key, value in list(namespace.items()):
        if old is not None and value is old:
            namespace[key] = new
        elif getattr(value, "__module__", None) == name and hasattr(value, "__name__"):
            namespace[key] = getattr(new, value.__name__, value)


def overlay(sources: dict[str, str]) -> None:
    """In the kernel of ``porter fix``'s fresh run (`porter_ext.fix.fresh_run`): an import
    of a person's file (by its real path, a key of ``sources``) runs its ported source
    instead, so the ported notebook runs with the files as ported, before any is written."""
    import importlib.abc
    import importlib.machinery
    import importlib.util

    from porter_ext.record import person_code

    class PortedFile(importlib.abc.Loader):
        def __init__(self, real: str) -> None:
            self.real = real

        def create_module(self, spec):  # the default module
            return None

        def exec_module(self, module: types.ModuleType) -> None:
            source = sources[self.real]
            person_code.also_written(self.real, source)
            code = compile(source, self.real, "exec", dont_inherit=True)
            exec(code, module.__dict__)  # noqa: S102

    class PortedFiles(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            origin = getattr(spec, "origin", None)
            real = os.path.realpath(origin) if isinstance(origin, str) else None
            if real not in sources:
                return None
            return importlib.util.spec_from_file_location(name, real, loader=PortedFile(real))

    sys.meta_path.insert(0, PortedFiles())


@dataclass
class FileOutcome:
    """What ``porter fix`` made of one file of the person's: written where, or why not."""

    file: str
    accepted: bool
    verified_on: list[str] = field(default_factory=list)
    reason: str | None = None
    written: Path | None = None
    backup: Path | None = None
    sites: list[RewriteSiteEntry] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The outcome in one line, as ``porter fix`` prints it."""
        applied = sum(s.applied for s in self.sites)
        called = ", ".join(self.cells)
        if self.written is not None:
            backup = f" (the original kept as {self.backup.name})" if self.backup else ""
            return (
                f"{self.file}: {applied} site(s) rewritten, verified on "
                f"{', '.join(self.verified_on)} by the cells that call it ({called}); "
                f"written to {self.written}{backup}"
            )
        return f"{self.file}: left as written: {self.reason}"


def settle_files(cells: Iterable[CellEntry]) -> list[FileOutcome]:
    """porter's side, once the notebook ran: each file's rewrite, accepted only when every
    cell that called into it verified the same rewrite (the specs all of them verified)."""
    by_file: dict[str, list[tuple[str, FileVerdict]]] = {}
    for cell in cells:
        for verdict in cell.file_verdicts:
            by_file.setdefault(verdict.file, []).append((cell.label, verdict))
    outcomes = []
    for file, given in sorted(by_file.items()):
        labels = [label for label, _ in given]
        verdicts = [v for _, v in given]
        first = verdicts[0]
        refusal = next(((label, v) for label, v in given if not v.accepted), None)
        if refusal is not None:
            why = f"refused at its call in {refusal[0]}: {refusal[1].reason}"
            outcomes.append(FileOutcome(file, False, reason=why, cells=labels))
            continue
        if any(v.source != first.source or v.digest != first.digest for v in verdicts):
            why = "the file changed between the cells that call it"
            outcomes.append(FileOutcome(file, False, reason=why, cells=labels))
            continue
        on = [s for s in first.verified_on if all(s in v.verified_on for v in verdicts)]
        outcomes.append(
            FileOutcome(file, True, verified_on=on, sites=list(first.sites), cells=labels)
        )
    return outcomes


def write_ported(
    outcomes: list[FileOutcome],
    cells: Iterable[CellEntry],
    folder: Path,
    write_text_atomic: Callable[[Path, str], object],
    *,
    in_place: bool = False,
) -> None:
    """Write each accepted file's rewrite (with ``write_text_atomic``, the CLI's writer):
    ``NAME.ported.py`` beside ``folder``/NAME.py, or over it after a backup
    (``in_place``); a file whose text is not the one recorded is left alone, and its
    outcome says so."""
    from porter_ext.record.person_code import Unreadable, read_source

    sources = {v.file: v for c in cells for v in c.file_verdicts if v.accepted}
    for outcome in outcomes:
        if not outcome.accepted:
            continue
        verdict = sources[outcome.file]
        path = (folder / outcome.file).resolve()
        try:
            now = read_source(str(path))
        except Unreadable as why:
            outcome.accepted, outcome.reason = False, f"{outcome.file} {why}: nothing written"
            continue
        if digest(now) != verdict.digest:
            outcome.accepted = False
            outcome.reason = "it changed since porter ran the notebook: nothing written"
            continue
        target = path if in_place else path.with_name(f"{path.stem}.ported{path.suffix}")
        if in_place:
            backup = path.with_name(f"{path.name}.orig")
            write_text_atomic(backup, now)
            outcome.backup = backup
        write_text_atomic(target, verdict.source)
        outcome.written = target


def file_notes(verdicts: Iterable[FileVerdict]) -> list[str]:
    """The verdicts in words, as the calling cell's notes show them."""
    out = []
    for v in verdicts:
        if v.accepted:
            out.append(
                f"porter fix: verified the rewrite of {v.file} here on {', '.join(v.verified_on)}"
            )
        else:
            out.append(f"porter fix: refused the rewrite of {v.file} here: {v.reason}")
    return out
