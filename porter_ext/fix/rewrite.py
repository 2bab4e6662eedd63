"""Rewriting a cell's source into the standard: the table's rewrites applied as a libcst
codemod, so comments, formatting and every line porter does not change stay as written.

Which entry applies at a call is decided by the same static analysis as ``porter lint``
(`porter_ext.fix.checks`), helped by what a run saw (which calls returned arrays, which
entry applied where the source leaves it to values): a call whose entry depends on values
nobody saw is left alone with that reason, as is one whose rewrite would drop an argument
(`porter_ext.spec.rewrites`). The codemod itself is `porter_ext.fix.codemod`; where a
rewrite uses ``xp`` and the scope has none, ``xp = array_namespace(...)`` is introduced
(`porter_ext.fix.xpbind`), and the imports of the helpers the rewrites use are added by
libcst's ``AddImportsVisitor``. The rewrite is a proposal: ``%%port --fix`` and ``porter
fix`` accept it only once replays verify it.

The analysis is ``porter lint``'s and reads ``ast``, whose columns count UTF-8 bytes; the
codemod places nodes as libcst does, and the run as the recorder does, in characters. The
one crossing between the two is `_analyse`.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper

from porter_ext.backends import HOST_LIBRARY, get_backend
from porter_ext.fix.cellscope import assigned_in, ended, first_line_using
from porter_ext.fix.checks import Analyzer
from porter_ext.fix.codemod import CellAnalysis, CellCodemod, RunKey, RunKnowledge
from porter_ext.fix.static import collect_imports
from porter_ext.model.entries import RewriteSiteEntry
from porter_ext.record.positions import LINE_BREAK, Columns, in_characters
from porter_ext.spec.standard import DEFAULT_VERSION, Standard, standard

__all__ = ["CellRewrite", "RunKnowledge", "rewrite_source"]

#: the helpers a rewrite reads, by the name it reads them as: the import that binds it,
#: as ``AddImportsVisitor.add_needed_import`` takes it (module, object, alias); a rewrite
#: through NumPy reads it as ``np``
_HELPER_IMPORTS = {
    "array_namespace": ("array_api_compat", "array_namespace", None),
    "xpx": ("array_api_extra", None, "xpx"),
    "np": (get_backend(HOST_LIBRARY).module, None, "np"),
    "math": ("math", None, None),
}


@dataclass
class CellRewrite:
    """The rewritten source of a cell and what happened at each finding."""

    original: str
    source: str
    sites: list[RewriteSiteEntry] = field(default_factory=list)

    @property
    def applied(self) -> list[RewriteSiteEntry]:
        return [s for s in self.sites if s.replacement is not None]

    @property
    def refused(self) -> list[RewriteSiteEntry]:
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
    module: cst.Module, rewriter: CellCodemod, present: Collection[str]
) -> cst.Module:
    """``xp`` for the cell's own level, and the imports of the helpers the rewrites use
    but for those ``present`` names (the cell's own imports, the helpers an earlier cell
    provides); ``AddImportsVisitor`` puts them after the cell's docstring and the imports
    it starts with, ``from __future__`` ones among them."""
    top = rewriter.scopes[0]
    if top["uses"] and top["arrays"] and not rewriter.binds_xp:
        body = list(module.body)
        at = first_line_using(module)
        xp_line = cst.parse_statement(f"xp = array_namespace({_xp_source(body, at, rewriter)})")
        body.insert(at, xp_line)
        module = module.with_changes(body=body)
    wanted = {
        "array_namespace": top["uses"] or "xp = array_namespace(" in module.code,
        "xpx": rewriter.needs_extra,
        "np": rewriter.needs_numpy,
        "math": rewriter.needs_math,
    }
    context = CodemodContext()
    for name, needed in wanted.items():
        if needed and name not in present:
            AddImportsVisitor.add_needed_import(context, *_HELPER_IMPORTS[name])
    return module.visit(AddImportsVisitor(context))


def _xp_source(body: Sequence[cst.BaseStatement], at: int, rewriter: CellCodemod) -> str:
    """The array ``xp`` is taken from, before the cell's statement ``at``: the first array
    the cell's rewrites read that is bound there (one the cell does not assign, or one a
    statement before ``at`` assigns), else an earlier cell's array of their library that
    the cell does not rebind. An array a loop's body assigns (``emb = C[X]`` inside a
    ``for``) is not there yet, and a replay would not send it: it is an output of the
    cell. Else the first array read (its replay then says why it does not run)."""
    top = rewriter.scopes[0]
    before = assigned_in(body[:at])
    for name in top["arrays"]:
        if name not in rewriter.assigned or name in before:
            return rewriter.xp_argument(name)
    earlier = rewriter.earlier_array(tuple(top["libraries"]) or rewriter.site_libraries)
    return rewriter.xp_argument(earlier if earlier is not None else top["arrays"][0])


def _analyse(
    tree: ast.Module,
    lines: Sequence[str],
    names: dict[str, str],
    std: Standard,
    arrays: dict[str, str] | None,
    run: RunKnowledge,
) -> CellAnalysis:
    """``porter lint``'s analysis of the cell (`porter_ext.fix.checks.Analyzer`), told what
    the run saw in its own terms (columns in UTF-8 bytes, the callee's last name), its
    findings handed to the codemod in libcst's (columns in characters)."""
    analyzer = Analyzer(names, std, arrays)
    analyzer.results = _in_bytes(run.results, lines)
    analyzer.receivers = _in_bytes(run.receivers, lines)
    sites = in_characters(analyzer.run(tree), lines)
    columns = Columns(lines=lines)
    return CellAnalysis(
        sites={(s.line, s.col, s.end_line, s.end_col): s for s in sites},
        through_library={
            (line, columns(line, col), end_line, columns(end_line, end_col)): found
            for (line, col, end_line, end_col), found in analyzer.through_library.items()
        },
        array_writes={
            (line, columns(line, col)): method
            for (line, col), method in analyzer.array_writes.items()
        },
    )


def _in_bytes(results: Mapping[RunKey, str], lines: Sequence[str]) -> dict[RunKey, str]:
    """The recorder's positions (columns in characters, qualified names) as the analysis'
    syntax tree gives them (columns in UTF-8 bytes, the callee's last name)."""
    out = {}
    for (line, col, name), library in results.items():
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        out[(line, len(text[:col].encode()), name.rpartition(".")[2])] = library
    return out


def rewrite_source(
    source: str,
    *,
    imports: dict[str, str] | None = None,
    arrays: dict[str, str] | None = None,
    version: str = DEFAULT_VERSION,
    only: Collection[RunKey] | None = None,
    provided: Collection[str] = (),
    run: RunKnowledge | None = None,
) -> CellRewrite:
    """The cell's source with every rewrite the source decides applied (see module doc).

    ``imports`` adds names imported elsewhere (earlier cells: local name → module),
    ``arrays`` names a run showed to be arrays (name → library), for parameters;
    ``only`` narrows the rewrite to those sites (``(line, col, name)``, as in the result),
    the others left as written: how a rewrite that does not verify as a whole is narrowed;
    ``provided`` names the helpers (``array_namespace``, ``xpx``) an earlier cell imports,
    whose import is then not repeated; ``run`` is what a run showed that the source
    cannot tell (`RunKnowledge`).

    A scope whose rewrites through ``xp`` read arrays of two libraries gets no ``xp``:
    those sites are left as written, whichever ``only`` (`XpBinding.mixed`). Which scopes
    mix is the full rewrite's to say, so a narrowed one is a second pass over the cell."""
    run = run if run is not None else RunKnowledge()
    tree = ast.parse(source)
    own = collect_imports(tree)
    names = {**(imports or {}), **own}
    analysis = _analyse(tree, LINE_BREAK.split(source), names, standard(version), arrays, run)
    wrapper = MetadataWrapper(cst.parse_module(source))

    def codemod(*narrowed: Any, earlier: bool = False) -> tuple[CellCodemod, cst.Module]:
        rewriter = CellCodemod(wrapper.module, analysis, names, arrays or {}, run, *narrowed)
        rewriter.through_earlier = earlier
        return rewriter, wrapper.visit(rewriter)

    rewriter, module = codemod()
    earlier = _through_earlier(rewriter)
    if earlier:  # the creations with the xp the other sites take from an earlier array
        rewriter, module = codemod(earlier=True)
    results = rewriter.results
    if only is not None or rewriter.mixed:  # narrowed, and the mixing sites as written
        proposed = {_key(s) for s in results}
        kept = (proposed if only is None else set(only)) - rewriter.mixed.keys()
        rewriter, module = codemod(kept, rewriter.mixed, earlier=earlier)
        results = rewriter.results
        if only is None:  # a move the full rewrite could not make (no xp) is still no site
            results = [s for s in results if _key(s) in proposed]
    rewritten = _with_preamble(module, rewriter, {*own, *provided})
    return CellRewrite(source, rewritten.code, sorted(results, key=lambda r: (r.line, r.col)))


def _through_earlier(rewriter: CellCodemod) -> bool:
    """Whether the cell's ``xp`` comes from an earlier cell's array it does not read (it
    reads none: ``plt.plot(torch.tensor(lossi).view(-1, 100).mean(1))``) while a creation
    stayed with its library: on another library the two would mix
    (``xp.reshape(torch.asarray(lossi))``), so the creation goes through that ``xp`` too
    (``xp.asarray(lossi)``). A cell whose creations are its only sites keeps them
    (``example = torch.ones((6, 6))`` for a dropout: no ``xp`` at all)."""
    return rewriter.kept_with_library and rewriter.xp_from_earlier and not rewriter.binds_xp


def _key(site: RewriteSiteEntry) -> RunKey:
    return (site.line, site.col, site.name)
