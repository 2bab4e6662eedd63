"""``%%port --fix``: the cell's rewrite into the standard, accepted only once replays prove it.

The codemod (`porter_ext.fix.rewrite`) proposes; this module verifies, through the
session's normal replay path (`porter_ext.session.pipeline`): the rewritten cell is
replayed from the same pre-run inputs as the original, on the original backend and on
every requested backend, and compared with the original run by the compare stage. A
rewrite is accepted when no replay that ran gives a different result, it runs on the
original backend, and it has fewer findings than the original. One that is not is
narrowed: the sites on the line a replay failed at are left out, then each site is tried
alone and the ones that verify are kept together. What is left out says why.

The inputs are captured before the original run (a second capture beside the replays'
own), so the verification rounds replay from the state the original started from.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from porter_ext.report.model import (
    DIFFERS,
    NON_STANDARD_STATUSES,
    CellEntry,
    ReplayEntry,
    RewriteEntry,
    RewriteSiteEntry,
)

__all__ = ["FixRun", "MAX_SINGLE_TRIES", "prepare"]

#: sites tried one by one when a rewrite must be narrowed (each try is one replay round)
MAX_SINGLE_TRIES = 6

_Key = tuple[int, int, str]


@dataclass
class _Round:
    """One verification replay of a candidate rewrite."""

    keys: frozenset
    source: str
    entries: list[ReplayEntry]
    accepted: bool
    verified_on: list[str]
    why: str | None = None
    #: the line a replay failed at, and the spec it failed on
    failed_line: int | None = None


@dataclass
class FixRun:
    """What ``--fix`` needs between the cell's capture (before the run) and its
    verification (after the run and the ordinary replays)."""

    source: str
    plan: Any  # pipeline.ReplayPlan of the original code (its capture kept for the rounds)
    requested: list
    shell: Any = None
    #: apply the verified definitions in the namespace (``porter fix``: later cells are
    #: verified with the earlier cells' rewrites in effect)
    in_effect: bool = False
    #: the cell's number for the recorder (calls of the rewritten definitions)
    cell: int | str = "fix"
    #: operators the run showed to mix bool with numbers (see `rewrite_source`)
    operators: dict = field(default_factory=dict)
    rounds: list[_Round] = field(default_factory=list)
    #: ``porter fix``: the session (its deferred definitions) and the notebook cell index
    session: Any = None
    index: int | None = None
    #: earlier cells' deferred definitions this cell reads (`porter_ext.session.deferred`)
    deferred: list = field(default_factory=list)
    #: verified definitions the rounds run before the cell (their code, plain Python)
    prefix: str = ""

    # -- the candidate -----------------------------------------------------------------
    def _code(self, source: str) -> str:
        if self.shell is None:
            return source
        from porter_ext.record.cell import keep_line_numbers

        return keep_line_numbers(source, self.shell.transform_cell(source))

    def _propose(self, namespace: Mapping[str, Any], only: Any = None) -> Any:
        from porter_ext.fix.rewrite import CellRewrite, rewrite_source

        masked, lines = _mask_magics(self.source)
        imports = _imports(namespace)
        provided = _provided(imports) if self.in_effect else ()
        result = rewrite_source(masked, imports=imports, arrays=_arrays(namespace), only=only,
                                operators=self.operators, provided=provided)  # fmt: skip
        if not lines:
            return result
        return CellRewrite(self.source, _unmask(result.source, lines), result.sites)

    def _new_inputs(self, code: str, namespace: Mapping[str, Any]) -> list[str]:
        """Names of ``namespace`` that the proposed rewrite reads and ``code`` does not."""
        from porter_ext.replay.analysis import analyse

        try:
            proposal = self._code(self._propose(namespace).source)
            before, after = analyse(code).inputs, analyse(proposal).inputs
        except SyntaxError:
            return []
        return [n for n in after if n not in before and n in namespace]

    def verify(self, entry: CellEntry, namespace: Mapping[str, Any], run: Any, settings: Any,
               policy: Any) -> CellEntry:  # fmt: skip
        """The entry with its ``rewrite`` (and the verdicts on earlier cells' deferred
        definitions it calls, as notes); releases the capture."""
        notes: list[str] = []
        try:
            if self.deferred:
                notes = self._settle_deferred(entry, namespace, run, settings, policy)
            rewrite = self._verify(entry, namespace, run, settings, policy)
        finally:
            if self.plan is not None and self.plan.capture is not None:
                self.plan.capture.release()
        if rewrite is not None and rewrite.status != "refused" and self.in_effect:
            _put_in_effect(self._code(rewrite.source), namespace, self.cell)
        return dataclasses.replace(entry, rewrite=rewrite, notes=[*entry.notes, *notes])

    def _settle_deferred(self, entry: CellEntry, namespace: Mapping[str, Any], run: Any,
                         settings: Any, policy: Any) -> list[str]:  # fmt: skip
        """Replay this cell with the earlier cells' rewritten definitions before it: they
        are accepted (and put in effect) when it agrees with this cell's original run."""
        from porter_ext.fix.rewrite import CellRewrite
        from porter_ext.session.deferred import Verdict, call_site, pending

        specs = self._specs(run)
        if run.exception is not None or not specs or self.plan is None:
            return []  # nothing to verify against here: a later call may
        same = CellRewrite(self.source, self.source, [])
        baseline = _finding_count(entry.calls)

        def judged(group: list) -> _Round:
            prefix = "".join(d.code for d in group)
            result = self._round(same, frozenset(), specs, namespace, run, settings, policy,
                                 baseline, prefix=prefix)  # fmt: skip
            self.rounds.remove(result)  # the cell's own rewrite is judged on its own rounds
            return result

        together = judged(self.deferred)
        results = {id(d): together for d in self.deferred}
        if not together.accepted and len(self.deferred) > 1:  # which one: each alone
            results = {id(d): judged([d]) for d in self.deferred}
        waiting = pending(self.session)
        notes = []
        for deferred in self.deferred:
            result = results[id(deferred)]
            where = call_site(self.source, deferred.names)
            detail = ", ".join(result.verified_on) if result.accepted else (result.why or "")
            notes.append(Verdict(deferred, result.accepted, where, detail).note())
            if deferred in waiting:
                waiting.remove(deferred)
            if result.accepted:
                self.prefix += deferred.code
                _put_in_effect(deferred.code, namespace, deferred.record_cell)
        return notes

    def _defer(self, full: Any, idle: Mapping[str, tuple[int, int]]) -> RewriteEntry | None:
        """``porter fix``: the rewrite of definitions nothing here calls waits for a later
        cell's call (`porter_ext.session.deferred`); None when it cannot wait."""
        from porter_ext.session.deferred import (
            NEVER_CALLED,
            WAITING,
            Deferred,
            definitions_only,
            patched,
            pending,
        )  # fmt: skip

        diff = full.diff(context=0)
        if patched(self.source, diff).rstrip("\n") != full.source.rstrip("\n"):
            return None
        code = self._code(full.source)
        waiting = [
            Deferred(self.index, name, definitions_only(code, name), self.cell)
            for name, (a, b) in idle.items()
            if any(a <= s.line <= b for s in full.applied)
        ]
        if not all(d.code for d in waiting):
            return None
        pending(self.session).extend(waiting)
        sites = [dataclasses.replace(s, reason=WAITING) if s.replacement is not None else s
                 for s in _site_entries(full.sites, frozenset(), {})]  # fmt: skip
        return RewriteEntry(source=self.source, status="refused", verified_on=[], sites=sites,
                            reason=NEVER_CALLED, diff=diff)  # fmt: skip

    def _verify(self, entry: CellEntry, namespace: Mapping[str, Any], run: Any, settings: Any,
                policy: Any) -> RewriteEntry | None:  # fmt: skip
        try:
            ast.parse(_mask_magics(self.source)[0])
        except SyntaxError:
            return _refused(self.source, [], "the cell has IPython syntax (a magic or a "
                            "shell command): porter rewrites plain Python only")  # fmt: skip
        self.operators = _mixed_operators(entry.calls)
        full = self._propose(namespace)
        if not full.sites:
            return None  # nothing porter could rewrite, nothing to say
        if not full.applied:
            return _refused(self.source, full.sites, "no call here has a rewrite")
        if run.exception is not None:
            return _refused(self.source, full.sites, "the original run raised "
                            f"{type(run.exception).__name__}: there is nothing to verify against")  # fmt: skip
        idle = _idle(self.source, entry.calls, full.applied)
        if idle is not None or not entry.calls:
            can_wait = self.in_effect and self.session is not None and self.index is not None
            waiting = self._defer(full, idle) if can_wait and idle else None
            return waiting or _refused(self.source, full.sites, "nothing it defines ran in "
                                       "this cell, so no replay can verify it: call it in the cell")  # fmt: skip
        specs = self._specs(run)
        if not specs:
            return _refused(self.source, full.sites, "the cell touched no array library: "
                            "no backend to verify the rewrite on")  # fmt: skip
        if self.plan is None or (self.plan.capture is None and not self.plan.in_process):
            return _refused(self.source, full.sites, "its inputs could not be captured")
        baseline = _finding_count(entry.calls)
        every = frozenset(_key(s) for s in full.applied)
        best = self._round(full, every, specs, namespace, run, settings, policy, baseline)
        if not best.accepted:
            best = self._narrow(full, best, specs, namespace, run, settings, policy, baseline)
        if best is None or not best.accepted:
            why = self.rounds[0].why if self.rounds else "it did not verify"
            return _refused(self.source, full.sites, why)
        final = self._propose(namespace, best.keys)
        return _entry(final, best, specs, self.rounds, _unexercised(entry.replays))

    def _specs(self, run: Any) -> list:
        from porter_ext.replay.dispatch import control_spec

        original = control_spec(self.plan.inputs.values(), run.calls) if self.plan else None
        specs = [original] if original is not None else []
        for spec in self.requested:
            if str(spec) not in {str(s) for s in specs}:
                specs.append(spec)
        return specs

    # -- the rounds --------------------------------------------------------------------
    def _round(self, candidate: Any, keys: frozenset, specs: list, namespace: Mapping[str, Any],
               run: Any, settings: Any, policy: Any, baseline: int,
               prefix: str | None = None) -> _Round:  # fmt: skip
        """One replay of ``candidate`` (after ``prefix``: verified definitions of earlier
        cells, `FixRun.prefix` by default), judged against the original run."""
        from porter_ext.replay.analysis import analyse
        from porter_ext.session.pipeline import replay_entries

        prefix = self.prefix if prefix is None else prefix
        shift = prefix.count("\n")
        code = prefix + self._code(candidate.source)
        plan = dataclasses.replace(self.plan, io=analyse(code), specs=list(specs), control=False,
                                   capture=_kept(self.plan.capture))  # fmt: skip
        entries, _ = replay_entries(plan, code, namespace, run, settings, policy)
        targets = [e for e in entries if e.role == "target"]
        original = str(specs[0])
        verified = [e.backend for e in targets if _agrees(e)]
        result = _Round(keys, candidate.source, targets, True, verified)
        changed = [e for e in targets if e.status == "ok" and not _agrees(e)]
        first = next((e for e in targets if e.backend == original), None)
        if changed:
            result.accepted = False
            result.why = f"it changes the result on {', '.join(e.backend for e in changed)} ({_what_differs(changed[0])})"  # fmt: skip
        elif first is None or first.backend not in verified:
            result.accepted = False
            error = first.error if first is not None else None
            line = error.line if error is not None else None
            if line is not None and shift:
                line = line - shift if line > shift else None
            result.failed_line = line
            where = f"at line {line}" if line is not None or not shift else (
                "in the definitions of an earlier cell")  # fmt: skip
            detail = f"{error.type} {where}: {error.message}" if error else (
                first.status if first is not None else "no replay")  # fmt: skip
            result.why = f"it does not run on {original}, the original backend ({detail})"
        elif first.calls is not None and _finding_count(first.calls) >= baseline:
            result.accepted = False
            result.why = "it does not have fewer findings than the original"
        self.rounds.append(result)
        return result

    def _narrow(self, full: Any, failed: _Round, specs: list, namespace: Mapping[str, Any],
                run: Any, settings: Any, policy: Any, baseline: int) -> _Round | None:  # fmt: skip
        """The largest set of sites that verifies, found in a few rounds (see module doc)."""
        keys = set(failed.keys)
        if failed.failed_line is not None:
            keys = {k for k in keys if k[0] != failed.failed_line}
            if keys and keys != set(failed.keys):
                again = self._try(keys, specs, namespace, run, settings, policy, baseline)
                if again.accepted:
                    return again
        good = set()
        for key in sorted(keys)[:MAX_SINGLE_TRIES]:
            if self._try({key}, specs, namespace, run, settings, policy, baseline).accepted:
                good.add(key)
        if not good:
            return None
        together = self._try(good, specs, namespace, run, settings, policy, baseline)
        if together.accepted or len(good) == 1:
            return together
        return None

    def _try(self, keys: set, specs: list, namespace: Mapping[str, Any], run: Any,
             settings: Any, policy: Any, baseline: int) -> _Round:  # fmt: skip
        candidate = self._propose(namespace, keys)
        applied = frozenset(_key(s) for s in candidate.applied)
        return self._round(candidate, applied, specs, namespace, run, settings, policy, baseline)


# --- helpers --------------------------------------------------------------------------

_MAGIC_MARK = "pass  # porter: IPython line {}"


def _mask_magics(source: str) -> tuple[str, dict[str, str]]:
    """The cell with each one-line magic and shell command (``%load_ext x``, ``!ls``)
    replaced by a ``pass`` placeholder at its indentation, and the lines to put back."""
    out, lines = [], {}
    for number, line in enumerate(source.split("\n")):
        body = line.lstrip()
        if body.startswith(("%", "!")) and not body.startswith("%%"):
            mark = _MAGIC_MARK.format(number)
            lines[mark] = body
            line = line[: len(line) - len(body)] + mark
        out.append(line)
    return "\n".join(out), lines


def _unmask(source: str, lines: Mapping[str, str]) -> str:
    out = []
    for line in source.split("\n"):
        body = line.lstrip()
        out.append(line[: len(line) - len(body)] + lines[body] if body in lines else line)
    return "\n".join(out)


_MIXES = re.compile(r"\S+ mixes (\w+) and (\w+):")


def _mixed_operators(calls: Any) -> dict:
    """The operators of the original run that mixed kinds of dtype, with their dtypes."""
    found = {}
    for call in calls:
        match = _MIXES.match(call.message or "")
        if call.kind == "operator" and call.origin_cell is None and match:
            found[(call.line, call.col, call.name)] = (match[1], match[2])
    return found


def _idle(source: str, calls: Any, applied: Any) -> dict | None:
    """The top-level functions nothing in the cell ran, when every applied site is inside
    one of them (None otherwise: the cell's own replay exercises its rewrite)."""
    from porter_ext.session.deferred import unexercised_defs

    masked = _mask_magics(source)[0]
    idle = unexercised_defs(masked, calls)
    inside = [s for s in applied if any(a <= s.line <= b for a, b in idle.values())]
    return idle if idle and len(inside) == len(applied) else None


def _key(site: Any) -> _Key:
    return (site.line, site.col, site.name)


def _agrees(replay: ReplayEntry) -> bool:
    """The compare stage's verdict: it ran, and every compared output agrees."""
    return replay.status == "ok" and all(
        out.within_tolerance is not False and out.difference not in DIFFERS
        for out in replay.outputs
    )


def _what_differs(replay: ReplayEntry) -> str:
    for out in replay.outputs:
        if out.within_tolerance is False or out.difference in DIFFERS:
            kind = out.difference or "numeric"
            return f"{out.name}: {kind}, max abs err {out.max_abs_err}"
    return "an output differs"


def _finding_count(calls: Any) -> int:
    """Distinct non-standard sites (a loop's repeats are one finding)."""
    return sum(1 for c in calls if c.status in NON_STANDARD_STATUSES)


def _kept(capture: Any) -> Any:
    """The capture for one round: the pipeline releases what it replays from, and the
    next round needs the same pre-run inputs (released once, in `FixRun.verify`)."""
    if capture is None:
        return None
    from porter_ext.replay.capture import Capture

    class _Kept(Capture):
        def release(self) -> None:
            pass

    return _Kept(capture.parcel, capture.states, capture.unsendable, capture.slots)


def _imports(namespace: Mapping[str, Any]) -> dict[str, str]:
    """Names earlier cells imported: modules, and functions of modules."""
    import types

    names = {}
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, types.ModuleType):
            names[name] = value.__name__
        elif callable(value) and getattr(value, "__module__", None) not in (None, "__main__"):
            qual = getattr(value, "__qualname__", None)
            if isinstance(qual, str) and "." not in qual and "<" not in qual:
                names[name] = f"{value.__module__}.{qual}"
    return names


def _provided(imports: Mapping[str, str]) -> list[str]:
    """The helpers an earlier cell of the notebook imported (``array_namespace``, ``xpx``):
    under ``porter fix`` the rewrite does not import them again."""
    from porter_ext.fix.static import is_helper

    wanted = {"array_namespace": "array_namespace", "xpx": "array_api_extra"}
    return [
        name for name, dotted in imports.items()
        if name in wanted and (dotted.rpartition(".")[2] == wanted[name] or dotted == wanted[name])
        and (is_helper(dotted) or dotted == "array_api_extra")
    ]  # fmt: skip


def _arrays(namespace: Mapping[str, Any]) -> dict[str, str]:
    """The names the run showed to hold arrays, with their libraries (the registry's)."""
    from porter_ext.backends import backend_for

    found = {}
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        backend = backend_for(value)
        if backend is not None:
            found[name] = backend.name
    return found


def _site_entries(sites: Any, kept: frozenset | None, reasons: Mapping[_Key, str]) -> list:
    out = []
    for site in sites:
        applied = site.replacement is not None and (kept is None or _key(site) in kept)
        reason = site.reason if site.replacement is None else None
        if site.replacement is None and _key(site) in reasons:
            reason = reasons[_key(site)]
        out.append(RewriteSiteEntry(site.line, site.col, site.name, site.original,
                                    site.replacement, applied, reason))  # fmt: skip
    return out


def _refused(source: str, sites: Any, reason: str) -> RewriteEntry:
    return RewriteEntry(source=source, status="refused", verified_on=[],
                        sites=_site_entries(sites, frozenset(), {}), reason=reason)  # fmt: skip


def _unexercised(replays: Any) -> set[str]:
    """Specs whose replay of the original cell never touched their library (the cell makes
    its arrays with its own library's creation calls): no rewrite can be verified there,
    nor does the original run there, so they do not count against the rewrite."""
    return {r.backend for r in replays if r.role == "target" and r.status == "not_exercised"}


def _entry(final: Any, best: _Round, specs: list, rounds: list[_Round],
           inapplicable: set[str] = frozenset()) -> RewriteEntry:  # fmt: skip
    """The accepted rewrite: verified (every site, every spec the original runs on) or
    partial (say what not)."""
    first = rounds[0]
    reasons = {}
    for site in final.sites:
        if site.replacement is None and site.reason and site.reason.startswith("left out"):
            alone = next((r for r in rounds if r.keys == frozenset({_key(site)})), None)
            why = (alone or first).why or "it did not verify"
            reasons[_key(site)] = f"left out: with it, {why}"
    sites = _site_entries(final.sites, None, reasons)
    missing, skipped = [], []
    for spec in map(str, specs):
        if spec in best.verified_on:
            continue
        replay = next((e for e in best.entries if e.backend == spec), None)
        same = replay is not None and replay.status == "not_exercised" and spec in inapplicable
        (skipped if same else missing).append(spec)
    problems = []
    if any(not s.applied for s in sites):
        problems.append(f"{sum(not s.applied for s in sites)} site(s) left as written")
    for spec in missing:
        replay = next((e for e in best.entries if e.backend == spec), None)
        error = replay.error if replay is not None else None
        detail = f"{error.type} at line {error.line}: {error.message}" if error else (
            replay.reason or replay.status if replay is not None else "not replayed")  # fmt: skip
        problems.append(f"not verified on {spec}: {detail}")
    status = "partial" if problems else "verified"
    if skipped:
        problems.append(f"not applicable on {', '.join(skipped)}: neither the cell nor its "
                        "rewrite touches those libraries (it makes its arrays with its own)")  # fmt: skip
    reason = "; ".join(problems) if problems else None
    return RewriteEntry(source=final.source, status=status, verified_on=list(best.verified_on),
                        sites=sites, reason=reason, diff=final.diff())  # fmt: skip


def _put_in_effect(code: str, namespace: Any, cell: int | str) -> None:
    """Run the rewritten cell's definitions and imports (never its other statements, which
    already ran as the original and agree) so later cells use the portable functions."""
    from porter_ext.record.transformer import transform

    tree = ast.parse(code)
    keep = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    tree.body = [node for node in tree.body if isinstance(node, keep)]
    if tree.body:  # recorded like any cell's code, so later cells see its calls
        tree = ast.fix_missing_locations(transform(tree, cell))
        exec(compile(tree, f"<porter fix of cell {cell}>", "exec"), namespace)  # noqa: S102


def prepare(source: str, code: str, namespace: Mapping[str, Any], specs: list, *, pool: Any,
            shell: Any = None, in_process: bool = False, in_effect: bool = False,
            session: Any = None, index: int | None = None) -> FixRun:  # fmt: skip
    """Before the original run: capture the cell's inputs for the verification rounds,
    with the names of the person's namespace that the rewrite reads and the cell does not
    (an earlier cell's ``array_namespace`` import, an array ``xp`` is taken from), and
    those of the earlier cells' deferred definitions the cell calls (``porter fix``)."""
    from porter_ext.backends import BackendSpec
    from porter_ext.session.pipeline import plan

    fix = FixRun(source, None, list(specs), shell=shell, in_effect=in_effect, session=session,
                 index=index)  # fmt: skip
    fix.deferred = _called_deferred(session, code) if in_effect and session is not None else []
    prefix = "".join(d.code for d in fix.deferred)
    # a spec so that the pipeline captures (the real ones are known after the run)
    warm = list(specs) or [BackendSpec("numpy")]
    fix.plan = plan(_reading(prefix + code, fix._new_inputs(code, namespace)), namespace, warm,
                    pool=pool, control=False, in_process=in_process)  # fmt: skip
    return fix


def _called_deferred(session: Any, code: str) -> list:
    """The deferred definitions (of earlier cells) that ``code`` reads."""
    from porter_ext.replay.analysis import analyse
    from porter_ext.session.deferred import pending

    waiting = pending(session)
    if not waiting:
        return []
    reads = set(analyse(code).inputs)
    return [d for d in waiting if d.names & reads]


def _reading(code: str, names: list[str]) -> str:
    """``code`` that also reads ``names`` (never run: only its analysis and capture)."""
    if not names:
        return code
    return f"{code}\nif False:  # porter: names its rewrite reads\n    ({', '.join(names)},)\n"


# --- the session's two calls ------------------------------------------------------------


def start(session: Any, source: str, code: str, namespace: Mapping[str, Any], specs: list,
          options: Any, cell: int | str) -> FixRun | None:  # fmt: skip
    """``--fix``, before the original run; None (with porter's warning) when it fails."""
    from porter_ext.guard import internal_error

    try:
        fix = prepare(source, code, namespace, specs, pool=None if options.in_process
                      else session.pool, shell=session.shell, in_process=options.in_process,
                      in_effect=session.headless, session=session,
                      index=session.cell_index)  # fmt: skip
    except SyntaxError:  # the run reports it
        return None
    except Exception as exc:
        internal_error("preparing the rewrite of this cell (--fix)", exc)
        return None
    fix.cell = cell
    return fix


def finish(session: Any, fix: FixRun | None, entry: CellEntry, namespace: Mapping[str, Any],
           run: Any, record: Any, options: Any, warnings: list[str]) -> CellEntry:  # fmt: skip
    """``--fix``, after the replays: the entry with its verified (or refused) rewrite."""
    if fix is None:
        return entry
    from porter_ext.guard import internal_error
    from porter_ext.replay.run import ReplaySettings

    try:
        settings = ReplaySettings(record=record, timeout=options.timeout)
        return fix.verify(entry, namespace, run, settings, session.policy(options))
    except Exception as exc:
        internal_error("verifying the rewrite of this cell (--fix)", exc, warnings)
        return entry
