"""Statements a file writes again word for word, parsed and walked once (``porter lint``).

A module-level simple statement (an assignment, an expression, ``del``, ``assert``) whose
text the file has shown before is cut out of its piece before the piece is parsed: its
lines are left blank, so the other statements keep their numbers, and the walk it made
before is replayed where it stands now, its findings moved to its lines and its names
bound again. A replay needs every name the statement mentions to be what it was then
(its value in the module and its import); else the statement's own tree, kept from its
first parse, is walked. A piece parsed with blanks stands only where no statement of it
spans a blank (the cut text was not inside a string, a bracket or a block) and the parser
warned of nothing; else the piece is parsed whole, as if nothing were cut.

Memory is bounded whatever the file: at most `MAX_TEXTS` texts are counted and
`MAX_STATEMENTS` statements kept (each with `MAX_WALKS` walks), a table past its size
emptied.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import islice, pairwise

from porter_ext.fix.checks import Analyzer, Site
from porter_ext.fix.scopes import MISSING

__all__ = ["Repeated", "Spliced", "starts_statement"]

#: texts of statements counted (to be kept once met again), and statements kept
MAX_TEXTS = 4096
MAX_STATEMENTS = 1024
#: walks kept per statement (one per way its names were when it was walked)
MAX_WALKS = 4
#: a longer statement is parsed where it stands
MAX_CHARS = 1000

#: lines that start at column 0 but continue the statement before them
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")
_NOT_A_START = frozenset({"", " ", "\t", "\f", "\r", "#", ")", "]", "}"})
#: statements whose walk depends only on the names they mention, at module level
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Assert, ast.Pass)
#: expressions with a scope of their own, or binding a name of the one around them
_SCOPED = (
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
)


#: statements cut out of a piece's tree: the line each starts at in the piece, its walk
Spliced = list[tuple[int, Callable[[], None]]]


def starts_statement(line: str) -> bool:
    """Whether ``line`` may start a top-level statement (a cut between pieces goes there)."""
    return line[:1] not in _NOT_A_START and not _CONTINUES.match(line)


@dataclass(frozen=True, slots=True)
class _Walk:
    """One walk of a kept statement: what its names were (module values, then imports),
    and what it did, where it stood at ``line`` (its first)."""

    seen: tuple
    line: int
    sites: tuple[Site, ...]
    bound: tuple[tuple[str, object], ...]
    calls: tuple[tuple[tuple[int, int, int, int], tuple[str, str, bool]], ...]
    writes: tuple[tuple[tuple[int, int], str], ...]


class _Statement:
    """A statement met again: its tree (numbered from 1), the names it mentions, the
    walks made of it."""

    __slots__ = ("node", "names", "walks")

    def __init__(self, node: ast.stmt, names: tuple[str, ...]) -> None:
        self.node, self.names = node, names
        self.walks: list[_Walk] = []


@dataclass(frozen=True, slots=True)
class _Cut:
    """A kept statement cut out of a piece: its lines ``first`` to ``end`` (0-based, end
    excluded) of the piece."""

    text: str
    statement: _Statement
    first: int
    end: int


class Repeated:
    """The statements of one module walked by ``analyzer`` that its text repeats."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self.counted: set[str] = set()
        #: kept statements by their text; None: a text that cannot be cut
        self.kept: dict[str, _Statement | None] = {}

    def parse(self, piece: list[str]) -> tuple[ast.Module, Spliced]:
        """The piece's tree without the statements met before, and those (the line each
        starts at in the piece, and its walk) for `FlowModel.feed`; as `ast.parse` of the
        whole piece (which raises as it does) where a cut is not certain to leave the
        meaning of the rest."""
        cuts = self._cuts(piece)
        if cuts:
            blanked = piece.copy()
            for cut in cuts:
                blanked[cut.first : cut.end] = [""] * (cut.end - cut.first)
            tree = _parsed_quietly("\n".join(blanked))
            if tree is not None and not _spanned(tree.body, cuts):
                return tree, [(cut.first + 1, partial(self._walk, cut)) for cut in cuts]
        tree = ast.parse("\n".join(piece))
        for cut in _spanned(tree.body, cuts):  # inside a string or a block: never cut again
            self.kept[cut.text] = None
        return tree, []

    def _cuts(self, piece: list[str]) -> list[_Cut]:
        """The piece's statements met before, each a run of lines from a line that may
        start a top-level statement to the next one (its trailing blank lines left)."""
        starts = [i for i, line in enumerate(piece) if starts_statement(line)]
        starts.append(len(piece))
        cuts = []
        for first, end in pairwise(starts):
            while end - first > 1 and not piece[end - 1].strip():
                end -= 1
            text = piece[first] if end - first == 1 else "\n".join(piece[first:end])
            if text in self.kept:
                statement = self.kept[text]
            elif len(text) > MAX_CHARS or "\\" in text:
                continue
            elif text in self.counted:
                statement = self._keep(text)
            else:
                if len(self.counted) >= MAX_TEXTS:
                    self.counted.clear()
                self.counted.add(text)
                continue
            if statement is not None and not (first and piece[first - 1].rstrip().endswith("\\")):
                cuts.append(_Cut(text, statement, first, end))
        return cuts

    def _keep(self, text: str) -> _Statement | None:
        """``text`` parsed on its own, kept where it is one statement that can be cut (None:
        it cannot, and is never tried again)."""
        if len(self.kept) >= MAX_STATEMENTS:
            self.kept.clear()
        self.counted.discard(text)
        statement = None
        tree = _parsed_quietly(text)
        body = tree.body if tree is not None else []
        if len(body) == 1 and _cuttable(body[0]):
            names = dict.fromkeys(n.id for n in ast.walk(body[0]) if isinstance(n, ast.Name))
            statement = _Statement(body[0], tuple(names))
        self.kept[text] = statement
        return statement

    def _walk(self, cut: _Cut) -> None:
        """The cut statement walked at its place, or its earlier walk replayed there."""
        model = self.analyzer
        line = model.line_offset + cut.first + 1
        statement = cut.statement
        env, imports = model.module.env, model.imports
        names = statement.names
        seen = tuple([env.get(n, MISSING) for n in names] + [imports.get(n) for n in names])
        for walk in statement.walks:
            if walk.seen == seen:
                _replay(model, walk, line)
                return
        keep = len(statement.walks) < MAX_WALKS
        sites, calls, writes = len(model.sites), len(model.through_library), len(model.array_writes)
        bound: list[tuple[str, object]] = []
        saved = model.line_offset
        model.line_offset, model.tape = line - 1, bound if keep else None
        try:
            model.visit(statement.node)
        finally:
            model.line_offset, model.tape = saved, None
        if keep:
            walk = _Walk(
                seen,
                line,
                tuple(model.sites[sites:]),
                tuple(bound),
                _added(model.through_library, calls),
                _added(model.array_writes, writes),
            )
            statement.walks.append(walk)


def _added(table: dict, before: int) -> tuple:
    """The items added to ``table`` since it held ``before`` (new keys come last)."""
    added = list(islice(reversed(table.items()), len(table) - before))
    return tuple(reversed(added))


def _replay(model: Analyzer, walk: _Walk, line: int) -> None:
    """What ``walk`` did, done again with the statement at ``line``."""
    shift = line - walk.line
    append = model.sites.append
    for s in walk.sites:
        append(
            Site(
                s.line + shift,
                s.col,
                s.end_line + shift,
                s.end_col,
                s.code,
                s.name,
                s.message,
                s.suggestion,
                s.needs_run,
                s.entry,
                s.undecided,
                s.options,
            )
        )
    for (first, col, last, end_col), found in walk.calls:
        model.through_library[(first + shift, col, last + shift, end_col)] = found
    for (first, col), method in walk.writes:
        model.array_writes[(first + shift, col)] = method
    for name, value in walk.bound:
        model.assign(name, value)


def _cuttable(node: ast.stmt) -> bool:
    """A simple statement at column 0 that opens no scope and binds only by assignment."""
    return (
        isinstance(node, _SIMPLE)
        and node.col_offset == 0
        and node.lineno == 1
        and not any(isinstance(sub, _SCOPED) for sub in ast.walk(node))
    )


def _parsed_quietly(text: str) -> ast.Module | None:
    """``text`` parsed, or None where it does not parse or the parser warns (a warning is
    the parser's to give where the text stands, once)."""
    try:
        with warnings.catch_warnings(record=True) as warned:
            tree = ast.parse(text)
    except (SyntaxError, RecursionError):
        return None
    return None if warned else tree


def _spanned(body: list[ast.stmt], cuts: list[_Cut]) -> list[_Cut]:
    """The cuts that a statement of ``body`` (in order) reaches into from outside."""
    spanned = []
    at = 0
    for cut in cuts:
        first, last = cut.first + 1, cut.end
        while at < len(body) and _end(body[at]) < first:
            at += 1
        for node in islice(body, at, None):
            start = _start(node)
            if start > last:
                break
            if start < first or _end(node) > last:
                spanned.append(cut)
                break
    return spanned


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _start(node: ast.stmt) -> int:
    """A statement's first line, its decorators' included."""
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])
