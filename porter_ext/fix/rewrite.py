"""Rewriting a cell's source into the standard: the table's rewrites applied as a libcst
codemod, so comments, formatting and every line porter does not change stay as written.

Which entry applies at a call is decided by the same static analysis as ``porter lint``
(`porter_ext.fix.checks`), helped by what a run saw (which calls returned arrays, which
entry applied where the source leaves it to values): a call whose entry depends on values
nobody saw is left alone with that reason, as is one whose rewrite would drop an argument
(`porter_ext.spec.rewrites`). The codemod itself is `porter_ext.fix.codemod`; where a
rewrite uses ``xp`` and the scope has none, ``xp = array_namespace(...)`` is introduced
(`porter_ext.fix.xpbind`). The rewrite is a proposal: ``%%port --fix`` and ``porter fix``
accept it only once replays verify it.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper

from porter_ext.fix.cellscope import ended, first_line_using, is_docstring, is_import
from porter_ext.fix.checks import Analyzer
from porter_ext.fix.codemod import CellCodemod, RewriteSite, _key
from porter_ext.fix.static import collect_imports
from porter_ext.record.positions import LINE_BREAK, in_characters
from porter_ext.spec.standard import DEFAULT_VERSION, standard

__all__ = ["CellRewrite", "RewriteSite", "rewrite_source"]

_HELPER_IMPORT = "from array_api_compat import array_namespace"
_EXTRA_IMPORT = "import array_api_extra as xpx"
_NUMPY_IMPORT = "import numpy as np"


@dataclass
class CellRewrite:
    """The rewritten source of a cell and what happened at each finding."""

    original: str
    source: str
    sites: list[RewriteSite] = field(default_factory=list)

    @property
    def applied(self) -> list[RewriteSite]:
        return [s for s in self.sites if s.replacement is not None]

    @property
    def refused(self) -> list[RewriteSite]:
        return [s for s in self.sites if s.replacement is None]

    @property
    def changed(self) -> bool:
        return self.source != self.original

    def diff(self, name: str = "cell", context: int = 3) -> str:
        """A unified diff; each side ends its last line, so no line of it runs into the next."""
        return "".join(
            difflib.unified_diff(
                ended(self.original).splitlines(keepends=True),
                ended(self.source).splitlines(keepends=True),
                f"{name} (original)",
                f"{name} (portable)",
                n=context,
            )
        )


def _with_preamble(
    module: cst.Module, rewriter: CellCodemod, tree: ast.Module, provided: Collection[str] = ()
) -> cst.Module:
    """Imports of the helpers the rewrites use (unless the cell or, through ``provided``,
    an earlier cell imports them), and ``xp`` for the cell's own level."""
    top = rewriter.scopes[0]
    names = {**collect_imports(tree), **dict.fromkeys(provided, "")}
    lines: list[str] = []
    any_xp = top["uses"] or "xp = array_namespace(" in module.code
    if any_xp and "array_namespace" not in names:
        lines.append(_HELPER_IMPORT)
    if rewriter.needs_extra and "xpx" not in names:
        lines.append(_EXTRA_IMPORT)
    if rewriter.needs_numpy and "np" not in names:
        lines.append(_NUMPY_IMPORT)
    body = list(module.body)
    if top["uses"] and top["arrays"] and not rewriter.binds_xp:
        first = first_line_using(module)
        xp_line = cst.parse_statement(f"xp = array_namespace({top['arrays'][0]})")
        body.insert(first, xp_line)
    at = 1 if body and is_docstring(body[0]) else 0
    while at < len(body) and is_import(body[at]):
        at += 1
    imports = [cst.parse_statement(line) for line in lines]
    rest = body[at:]
    if imports and rest and not is_import(rest[0]) and not rest[0].leading_lines:
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:at], *imports, *rest])


def _in_bytes(
    results: Mapping[tuple[int, int, str], str], lines: list[str]
) -> dict[tuple[int, int, str], str]:
    """The recorder's positions (columns in characters, qualified names) as the syntax tree
    gives them (columns in UTF-8 bytes, the callee's last name)."""
    out = {}
    for (line, col, name), library in results.items():
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        out[(line, len(text[:col].encode()), name.rpartition(".")[2])] = library
    return out


def _through_library(
    calls: Mapping[tuple[int, int, int, int], tuple[str, str, bool]], lines: list[str]
) -> dict[tuple[int, int, int, int], tuple[str, str, bool]]:
    """The analysis' positions (columns in UTF-8 bytes) in characters, as libcst's."""

    def chars(line: int, col: int) -> int:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text.encode()[:col].decode(errors="ignore"))

    return {
        _key(line, chars(line, col), end_line, chars(end_line, end_col)): names
        for (line, col, end_line, end_col), names in calls.items()
    }


def rewrite_source(
    source: str,
    *,
    imports: dict[str, str] | None = None,
    arrays: dict[str, str] | None = None,
    version: str = DEFAULT_VERSION,
    only: Collection[tuple[int, int, str]] | None = None,
    operators: Mapping[tuple[int, int, str], tuple[str, str]] | None = None,
    provided: Collection[str] = (),
    results: Mapping[tuple[int, int, str], str] | None = None,
    decided: Mapping[tuple[int, int, str], tuple[str, str | None]] | None = None,
    receivers: Mapping[tuple[int, int, str], str] | None = None,
    others: Collection[str] = (),
) -> CellRewrite:
    """The cell's source with every rewrite the source decides applied (see module doc).

    ``imports`` adds names imported elsewhere (earlier cells: local name → module),
    ``arrays`` names a run showed to be arrays (name → library), for parameters;
    ``only`` narrows the rewrite to those sites (``(line, col, name)``, as in the result),
    the others left as written: how a rewrite that does not verify as a whole is narrowed;
    ``operators`` are the operators a run showed to mix dtype kinds (``(line, col, name)``
    → the operands' dtypes, ``("bool", "float32")``): their bool operand is converted;
    ``provided`` names the helpers (``array_namespace``, ``xpx``) an earlier cell imports,
    whose import is then not repeated; ``results`` are the calls a run showed to return
    an array (``(line, col, name)`` as the recorder gives them → library), so that the
    calls on their results are rewritten too (``torch.sigmoid(z).clamp(0, 1).log()``),
    and ``receivers`` the method calls it saw on arrays, keyed alike (``a.flatten()`` on a
    parameter ``a``);
    ``decided`` are the verdicts a run recorded (``(line, col, name)`` → ``(status,
    standard_name)``) where the source alone leaves the entry to values (``x.T``: is x 2-D?);
    ``others`` the names a run showed to hold something other than an array (a list),
    which ``xp`` is never taken from."""
    tree = ast.parse(source)
    names = collect_imports(tree, dict(imports or {}))
    # lint's columns are ast's (UTF-8 bytes); libcst's and the recorder's count characters
    lines = LINE_BREAK.split(source)
    analyzer = Analyzer(names, standard(version), arrays)
    analyzer.results = _in_bytes(results or {}, lines)
    analyzer.receivers = _in_bytes(receivers or {}, lines)
    sites = in_characters(analyzer.run(tree), lines)
    by_key = {_key(s.line, s.col, s.end_line, s.end_col): s for s in sites}
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module)
    rewriter = CellCodemod(by_key, wrapper.module, only, operators, arrays, names, decided, others)
    rewriter.through_library = _through_library(analyzer.through_library, lines)
    rewriter.array_writes = analyzer.array_writes  # statements start after indentation
    rewritten = wrapper.visit(rewriter)
    rewritten = _with_preamble(rewritten, rewriter, tree, provided)
    results = sorted(rewriter.results, key=lambda r: (r.line, r.col))
    return CellRewrite(source, rewritten.code, results)
