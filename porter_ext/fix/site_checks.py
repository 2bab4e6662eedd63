"""Rewritten sites verified at their calls, where the cell as a whole cannot be (issue 29
item 4).

A training cell keeps ``loss.backward()`` and ``p.grad`` (autograd is outside the
standard): its rewrite verifies on torch, the original backend, and fails on every other
library at the line left as written, so none of its rewritten sites is verified there.
Each site's rewrite is still checked where it runs: the accepted rewrite is replayed once
more on the original backend with each rewritten expression marked
(`porter_ext.replay.probes`); at its first calls (one per kind of input) the replay
evaluates the expression again on the other libraries with the values it read there, and
this module compares what came back with the original backend's value, as the compare
stage judges any output. A site whose expression gives the same values on a library is
``checked_on`` it; the cell's rewrite stays ``partial``, and says which sites keep the
cell on the original backend.

Expressions are checked (a call, an operator), and the value a rewritten write puts
into an array (``x[...] = xp.where(...)``); an expression that reads anything but arrays,
numbers and array namespaces (a layer, a generator) is not, and says so. Attribute reads
on what is no array (``self.mask``, ``torch.inf``) are read as the replay reads them.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from porter_ext.replay.probes import PROBE, Failure, HostArray, Probed
from porter_ext.spec.dtype_categories import dtype_kind

if TYPE_CHECKING:
    from porter_ext.compare.tolerance import TolerancePolicy
    from porter_ext.model.entries import ReplayEntry, RewriteEntry, RewriteSiteEntry

_Key = tuple[int, int, str]
#: the field of each node that holds what it writes (``x[i] = v``, ``for x[i] in ...``)
_WRITTEN = {
    cst.AssignTarget: "target",
    cst.AugAssign: "target",
    cst.AnnAssign: "target",
    cst.For: "target",
    cst.CompFor: "target",
    cst.Del: "target",
    cst.AsName: "name",
}
#: nodes whose rewrite is checked at its calls (an index read: not where it is written)
_CHECKED = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript)


def _key(site: RewriteSiteEntry) -> _Key:
    return (site.line, site.col, site.name)


def checkable(sites: Iterable[RewriteSiteEntry]) -> dict[str, list[_Key]]:
    """The applied sites whose replacement is an expression, by that text."""
    texts: dict[str, list[_Key]] = {}
    for site in sites:
        text = (site.replacement or "").strip()
        if not site.applied or not text:
            continue
        checked = _checked_expression(text)
        if checked is not None:
            texts.setdefault(checked, []).append(_key(site))
    return texts


def _checked_expression(text: str) -> str | None:
    """The expression of a replacement that a check evaluates: the replacement itself, or
    the value a one-target assignment writes (``x[...] = xp.where(...)``, ``x =
    xpx.at(x)[i].set(v)``: the array then holds that value); None for anything else."""
    try:
        body = ast.parse(text, mode="eval").body
    except SyntaxError:
        try:
            statements = ast.parse(text).body
        except SyntaxError:
            return None
        if len(statements) != 1 or not isinstance(statements[0], ast.Assign):
            return None
        if len(statements[0].targets) != 1:
            return None
        body = statements[0].value
        text = ast.get_source_segment(text, body) or ""
    checked = ast.Call | ast.BinOp | ast.UnaryOp | ast.Subscript
    return text.strip() if isinstance(body, checked) else None


class _Marker(cst.CSTTransformer):
    def __init__(self, texts: Mapping[str, list[_Key]]) -> None:
        super().__init__()
        self.texts = texts
        self.marks: dict[str, int] = {}
        self._module = cst.Module([])
        #: what is written, not read (``x[i] = v``, ``for x[i] in ...``, ``del x[i]``)
        self._written: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        written = _WRITTEN.get(type(node))
        if written is not None:
            self._written.add(id(getattr(node, written)))
        return True

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
        if not isinstance(original, _CHECKED) or id(original) in self._written:
            return updated
        text = self._module.code_for_node(original).strip()
        if text not in self.texts:
            return updated
        mark = self.marks.setdefault(text, len(self.marks))
        inner = updated.with_changes(lpar=(), rpar=())
        return cst.Call(
            func=cst.Name(PROBE),
            args=[cst.Arg(cst.Integer(str(mark))), cst.Arg(inner)],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )


@dataclasses.dataclass(frozen=True)
class Marks:
    """The marked expressions of a source: each mark's text (what the probe evaluates)
    and the sites whose replacement it is."""

    texts: dict[int, str]
    sites: dict[int, list[_Key]]


def marked(source: str, sites: Iterable[RewriteSiteEntry]) -> tuple[str, Marks]:
    """``source`` with each checkable site's expression marked for the probe, and the
    marks (none: nothing to check)."""
    texts = checkable(sites)
    empty = Marks({}, {})
    if not texts:
        return source, empty
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return source, empty
    marker = _Marker(texts)
    code = module.visit(marker).code
    found = {mark: text for text, mark in marker.marks.items()}
    return code, Marks(found, {mark: texts[text] for mark, text in found.items()})


@dataclasses.dataclass
class SiteCheck:
    """What the probes said of one text: the libraries where every call checked gave the
    original backend's values, and, for the others, why not (the first)."""

    calls: int = 0
    agreed: set[str] = dataclasses.field(default_factory=set)
    failed: dict[str, str] = dataclasses.field(default_factory=dict)

    def on(self, specs: Sequence[str]) -> list[str]:
        return [s for s in specs if s in self.agreed and s not in self.failed]


def judge(
    probes: Iterable[Probed], specs: Sequence[str], policy: TolerancePolicy | None = None
) -> dict[int, SiteCheck]:
    """Each mark's `SiteCheck` from the probes of one replay."""
    checks: dict[int, SiteCheck] = {}
    for probed in probes:
        check = checks.setdefault(probed.mark, SiteCheck())
        check.calls += 1
        for spec in specs:
            other = probed.others.get(spec, Failure("the replay did not evaluate it there"))
            why = _differs(probed.value, other, policy)
            if why is None:
                check.agreed.add(spec)
            else:
                check.failed.setdefault(spec, why)
    return checks


def _differs(value: Any, other: Any, policy: TolerancePolicy | None) -> str | None:
    """Why ``other`` (a library's value of the expression) is not ``value`` (the original
    backend's), None where it is, as the compare stage judges outputs."""
    from porter_ext.compare.numeric import Judging, compare_values

    if isinstance(value, Failure):
        return value.why
    if isinstance(other, Failure):
        return other.why
    if isinstance(value, list | tuple) or isinstance(other, list | tuple):
        if not (isinstance(value, list | tuple) and isinstance(other, list | tuple)):
            return "it gives a sequence where the original gives one value, or the reverse"
        if len(value) != len(other):
            return f"it gives {len(other)} values where the original gives {len(value)}"
        for a, b in zip(value, other, strict=True):
            why = _differs(a, b, policy)
            if why is not None:
                return why
        return None
    expected, actual = _plain(value), _plain(other)
    kind = _kind(value), _kind(other)
    if kind[0] != kind[1]:
        return f"it gives {kind[1]} values where the original gives {kind[0]}"
    judging = Judging(policy) if policy is not None else Judging()
    for diff in compare_values("value", expected, actual, judging):
        if diff.difference == "shape_changed":
            return f"it gives shape {diff.shape} where the original gives {diff.expected_shape}"
        if diff.within_tolerance is False:
            return f"it gives other values (max abs err {diff.max_abs_err:.3g})"
    return None


def _plain(value: Any) -> Any:
    return value.array if isinstance(value, HostArray) else value


def _kind(value: Any) -> str:
    import numpy as np

    dtype = value.array.dtype if isinstance(value, HostArray) else np.asarray(value).dtype
    return dtype_kind(str(dtype))


def checked_sites(
    rewrite: RewriteEntry,
    replay: ReplayEntry,
    marks: Marks,
    specs: Sequence[str],
    policy: TolerancePolicy | None = None,
    first_line: int = 1,
) -> RewriteEntry:
    """``rewrite`` with each checkable site's check (`RewriteSiteEntry.checked_on`,
    ``check``) from the marked ``replay`` on the original backend, and a sentence on it
    in its reason (lines as the editor counts them from ``first_line``, the cell's
    `CellEntry.first_line`)."""
    if replay.status != "ok" or not replay.probes:
        why = replay.reason or (replay.error.message if replay.error else replay.status)
        return _noted(rewrite, f"its sites were not checked at their calls ({why})")
    checks = judge(replay.probes, specs, policy)
    by_site = {
        key: checks[mark] for mark, keys in marks.sites.items() if mark in checks for key in keys
    }
    sites, verified = [], []
    for site in rewrite.sites:
        check = by_site.get(_key(site)) if site.applied else None
        if check is None:
            sites.append(site)
            continue
        on = check.on(specs)
        grouped: dict[str, list[str]] = {}
        for spec in specs:
            if spec in check.failed:
                grouped.setdefault(check.failed[spec], []).append(spec)
        said = [f"not on {', '.join(where)}: {why}" for why, where in grouped.items()]
        text = f"verified at {check.calls} call(s) on {', '.join(on)}" if on else ""
        text = "; ".join(filter(None, [text, *said]))
        sites.append(dataclasses.replace(site, checked_on=on, check=text or None))
        if len(on) == len(specs):
            verified.append(site)
    if not verified:
        return dataclasses.replace(rewrite, sites=sites)
    lines = ", ".join(str(n + first_line - 1) for n in sorted({s.line for s in verified}))
    sentence = (
        f"{len(verified)} site(s) verified at their calls on {', '.join(specs)} "
        f"(line(s) {lines}): each rewritten expression gives the original's values there"
    )
    return _noted(dataclasses.replace(rewrite, sites=sites), sentence)


def _noted(rewrite: RewriteEntry, sentence: str) -> RewriteEntry:
    reason = f"{rewrite.reason}; {sentence}" if rewrite.reason else sentence
    return dataclasses.replace(rewrite, reason=reason)
