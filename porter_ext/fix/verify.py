"""``%%port --fix``: the cell's rewrite into the standard, accepted only once replays prove it.

The codemod (`porter_ext.fix.rewrite`) proposes; this module verifies, through the
replay path of every ported cell (`porter_ext.compare.pipeline`): the rewritten cell is
replayed from the same pre-run inputs as the original, on the original backend and on
every requested backend, and compared with the original run by the compare stage. A
rewrite is accepted when no replay that ran gives a different result, it runs on the
original backend, and it has fewer findings than the original. One that is not is
narrowed: the sites on the line a replay failed at are left out, then each site is tried
alone and the ones that verify are kept together (or, where together they do not, one
by one while the rest still verifies). What is left out says why. How each round is
judged is `porter_ext.fix.verify_rounds`; definitions verified at a later cell's call
are `porter_ext.fix.deferred`.

The inputs are captured before the original run (a second capture beside the replays'
own), so the verification rounds replay from the state the original started from.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Collection, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from porter_ext.fix.blockers import every_finding_sited
from porter_ext.fix.deferred import (
    Deferred,
    array_parameters,
    def_spans,
    defer,
    idle_functions,
    not_run_reason,
    settle_at_call,
    unexercised_defs,
)
from porter_ext.fix.draws import drawn, with_draws_note
from porter_ext.fix.every_call import (
    brought_helpers,
    defined_in,
    ported_back,
    register,
    verify_calls,
)
from porter_ext.fix.files import file_notes, verify_files
from porter_ext.fix.in_effect import put_in_effect
from porter_ext.fix.magic_args import close_code_magics, magic_sites, open_code_magics
from porter_ext.fix.verify_rounds import (
    Judge,
    Round,
    Verification,
    finding_count,
    judged,
    kept_capture,
    original_dtypes,
    round_settings,
    site_reasons,
    slow_replays,
)
from porter_ext.fix.verify_support import (
    OWN_SEMANTICS,
    accepted_entry,
    mixed_operators,
    namespace_arrays,
    namespace_fallbacks,
    namespace_imports,
    namespace_others,
    own_semantics_sites,
    provided_helpers,
    refused,
    run_knowledge,
    site_key,
    unexercised_specs,
    with_reasons,
)
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import DefinitionVerdict, FileVerdict, RewriteEntry, RewriteSiteEntry
from porter_ext.record.magic_lines import mask_magics, unmask

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from porter_ext.compare.tolerance import TolerancePolicy
    from porter_ext.fix.rewrite import CellRewrite
    from porter_ext.record.cell import CellRun
    from porter_ext.replay.plan import ReplayPlan
    from porter_ext.replay.run import ReplaySettings

__all__ = ["FixRun", "MAX_SINGLE_TRIES"]

#: sites tried one by one when a rewrite must be narrowed (each try is one replay round)
MAX_SINGLE_TRIES = 6

_Key = tuple[int, int, str]


@dataclass
class FixRun:
    """What ``--fix`` needs between the cell's capture (before the run) and its
    verification (after the run and the ordinary replays)."""

    source: str
    #: the replay plan of the original code (its capture kept for the rounds)
    plan: ReplayPlan | None
    requested: list
    shell: InteractiveShell | None = None
    #: apply the verified definitions in the namespace (``porter fix``: later cells are
    #: verified with the earlier cells' rewrites in effect)
    in_effect: bool = False
    #: the cell's number for the recorder (calls of the rewritten definitions)
    cell: int | str = "fix"
    #: operators the run showed to mix bool with numbers (`RunKnowledge`)
    operators: dict = field(default_factory=dict)
    #: what the run saw that the source cannot tell (`run_knowledge`, `RunKnowledge`)
    seen: dict = field(default_factory=dict)
    #: parameters of functions nothing in the cell calls, used there as arrays of the
    #: notebook's one array library (`deferred.array_parameters`: verified at a call)
    parameters: dict = field(default_factory=dict)
    rounds: list[Round] = field(default_factory=list)
    #: sites that verify alone and were left out of the narrowed rewrite, with why
    dropped: dict = field(default_factory=dict)
    #: ``porter fix``: the session (its deferred definitions) and the notebook cell index
    session: object | None = None
    index: int | None = None
    #: earlier cells' deferred definitions this cell reads (`porter_ext.fix.deferred`)
    deferred: list = field(default_factory=list)
    #: the rewritten functions in effect, which the cell's run calls as the person wrote
    #: them and its replays as ported (`porter_ext.fix.every_call.InEffect`)
    ported: list = field(default_factory=list)
    #: verified definitions the rounds run before the cell (their code, plain Python)
    prefix: str = ""
    #: the verified rewrites of the person's files the cell calls into, put in place
    #: before the cell in every later round (`porter_ext.fix.files.install`)
    files_prefix: str = ""
    #: what the rounds are judged against: the original cell's own replay on each
    #: backend, and the original run's dtypes (what the backend alone changes, a default
    #: dtype, is not held against the rewrite: `verify_rounds.Judge`)
    judge: Judge = field(default_factory=Judge)

    # -- the candidate -----------------------------------------------------------------
    def code_of(self, source: str) -> str:
        if self.shell is None:
            return source
        from porter_ext.record.cell import keep_line_numbers

        return keep_line_numbers(source, self.shell.transform_cell(source))

    def _propose(
        self,
        namespace: Mapping[str, Any],
        only: Collection[_Key] | None = None,
        keep: Collection[int] = (),
    ) -> CellRewrite:
        """The codemod's rewrite of the cell: its ``%time``/``%timeit`` statements
        rewritten in place (`porter_ext.fix.magic_args`), but those on the lines in
        ``keep``, and its other magics as written."""
        from porter_ext.fix.rewrite import CellRewrite, RunKnowledge, rewrite_source

        opened, magics = open_code_magics(self.source, keep)
        masked, lines = mask_magics(opened)
        imports = namespace_imports(namespace)
        provided = self._provided(imports)
        knowledge = RunKnowledge(
            **self.seen, operators=self.operators, others=namespace_others(namespace, masked)
        )
        arrays = {**self.parameters, **namespace_arrays(namespace)}
        result = rewrite_source(
            masked, imports=imports, arrays=arrays, only=only, provided=provided, run=knowledge
        )
        held = own_semantics_sites(result.sites, namespace, masked)
        if held.keys() & {site_key(s) for s in result.applied}:  # those sites as written
            narrowed = {site_key(s) for s in result.applied} - held.keys()
            result = rewrite_source(
                masked,
                imports=imports,
                arrays=arrays,
                only=narrowed,
                provided=provided,
                run=knowledge,
            )
        result.sites = with_reasons(result.sites, held)
        if not lines and not magics:
            return result
        source, lost = close_code_magics(unmask(result.source, lines), magics)
        if lost:  # a rewrite that no longer fits the magic's line: that line as written
            kept = self._propose(namespace, only, {*keep, *lost})
            return CellRewrite(self.source, kept.source, [*kept.sites, *magic_sites(result, lost)])
        return CellRewrite(self.source, source, result.sites)

    def _provided(self, imports: Mapping[str, str]) -> list[str]:
        """The helpers an earlier cell imports that the rewrite need not import again
        (``porter fix``): not those only a rewritten definition in effect brought into
        the namespace (that rewrite may be refused or reverted, and its replays did not
        have them: ``NameError: name 'array_namespace' is not defined``)."""
        if not self.in_effect:
            return []
        brought = brought_helpers(self.session) if self.session is not None else set()
        return [n for n in provided_helpers(imports) if n not in brought]

    def _new_inputs(self, code: str, namespace: Mapping[str, Any]) -> list[str]:
        """Names of ``namespace`` that the proposed rewrite reads and ``code`` does not, and
        the helpers an earlier cell provides (``porter fix``): the rewrite proposed after
        the run, with what the run saw, may read them where this one does not."""
        from libcst import ParserSyntaxError

        from porter_ext.replay.analysis import analyse

        try:
            proposal = self.code_of(self._propose(namespace).source)
            io = analyse(code)
            before, after = io.inputs, analyse(proposal).inputs
        except (SyntaxError, ParserSyntaxError):  # the run (or _verify) says so
            return []
        provided = self._provided(namespace_imports(namespace))
        reads = [n for n in after if n not in before and n in namespace]
        reads += [n for n in namespace_fallbacks(namespace, code, io) if n not in before]
        return list(dict.fromkeys(reads)) + [
            n for n in provided if n not in reads and n not in before
        ]

    def verify(
        self,
        entry: CellEntry,
        namespace: MutableMapping[str, Any],
        run: CellRun,
        settings: ReplaySettings,
        policy: TolerancePolicy,
    ) -> CellEntry:
        """The entry with its ``rewrite`` (and the verdicts on earlier cells' deferred
        definitions it calls, with a note for each); releases the capture."""
        verdicts: list[DefinitionVerdict] = []
        files: list[FileVerdict] = []
        try:
            self.judge = self._judge(entry, namespace, run)
            ctx = Verification(
                self._specs(run), namespace, run, settings, policy, finding_count(entry.calls)
            )
            files = verify_files(self, entry, ctx)  # the person's files it called into
            if self.ported:
                verdicts = verify_calls(self, entry, ctx)
            if self.deferred:
                verdicts += settle_at_call(self, entry, ctx)
            rewrite = self._verify(entry, ctx)
            if rewrite is not None:
                sites = every_finding_sited(rewrite.sites, entry.calls, self.source)
                rewrite = dataclasses.replace(rewrite, sites=sites)
        finally:
            if self.plan is not None and self.plan.capture is not None:
                self.plan.capture.release()
            if self.session is not None:
                ported_back(self.session, namespace)
        if rewrite is not None and rewrite.status != "refused" and self.in_effect:
            spans = def_spans(self.source)
            changed = {
                name: (a, b)
                for name, (a, b) in spans.items()
                if any(a <= s.line <= b for s in rewrite.sites if s.applied)
            }
            code = self.code_of(rewrite.source)
            self.take_effect(code, defined_in(self.index, code, self.cell, changed), namespace)
        notes = [*entry.notes, *(v.note() for v in verdicts), *file_notes(files)]
        return dataclasses.replace(
            entry,
            rewrite=rewrite,
            notes=notes,
            definition_verdicts=[*entry.definition_verdicts, *verdicts],
            file_verdicts=[*entry.file_verdicts, *files],
        )

    def take_effect(
        self,
        code: str,
        definitions: list[Deferred],
        namespace: MutableMapping[str, Any],
        cell: int | str | None = None,
    ) -> None:
        """Put a verified rewrite's definitions and imports in effect in the namespace
        (recorded as of the recorder's ``cell``, this one's by default), its changed
        functions (``definitions``) verified again at every later call
        (`porter_ext.fix.every_call`)."""
        absent = {n for n in ("array_namespace", "xpx") if n not in namespace}
        before = put_in_effect(code, namespace, self.cell if cell is None else cell)
        if self.session is not None:  # helpers only a rewrite imported (`_provided`)
            brought_helpers(self.session).update(n for n in absent if n in namespace)
        if self.session is not None and self.index is not None:
            register(self.session, definitions, namespace, before)

    def _judge(self, entry: CellEntry, namespace: Mapping[str, Any], run: CellRun) -> Judge:
        """What every round of this cell (its deferred definitions' too) is judged against."""
        from porter_ext.replay.run import collect_outputs

        replays = {r.backend: r for r in entry.replays if r.role == "target"}
        drew = drawn(self.source, entry.calls)
        if self.plan is None or run.exception is not None:
            return Judge(replays, drawn=drew)
        # the plan reads more than the cell (earlier cells' definitions, xp's array), so
        # its last statement is no expression: the run says whether the cell made a value
        io = dataclasses.replace(self.plan.io, has_value=True)
        outputs = collect_outputs(io, namespace, run.value)
        # an array the cell writes into (``x2[0, 0] = 12``) is no output of it, but is
        # one of a rewrite that rebinds it (``x2 = xpx.at(x2)[0, 0].set(12)``)
        written = {n: namespace[n] for n in io.writes if n in namespace}
        return Judge(replays, original_dtypes({**written, **outputs}), drew)

    def _verify(self, entry: CellEntry, ctx: Verification) -> RewriteEntry | None:
        namespace = ctx.namespace
        try:
            ast.parse(mask_magics(self.source)[0])
        except SyntaxError:
            return refused(
                self.source,
                [],
                "the cell has IPython syntax (a magic or a "
                "shell command): porter rewrites plain Python only",
            )
        self.operators = mixed_operators(entry.calls)
        self.seen = run_knowledge(entry.calls)
        self.parameters = self._parameters(entry, namespace)
        full = self._propose(namespace)
        if not full.sites:
            return None  # nothing porter could rewrite, nothing to say
        if not full.applied:
            return refused(self.source, full.sites, _nothing_applied(full.refused))
        if ctx.run.exception is not None:
            return refused(
                self.source,
                full.sites,
                "the original run raised "
                f"{type(ctx.run.exception).__name__}: there is nothing to verify against",
            )
        idle, unrun = idle_functions(self.source, entry.calls, full.applied)
        every = frozenset(site_key(s) for s in full.applied) - unrun
        if not every or not entry.calls:
            can_wait = self.in_effect and self.session is not None and self.index is not None
            waiting = defer(self, full, idle) if can_wait and unrun and not every else None
            return waiting or refused(
                self.source,
                full.sites,
                "nothing it defines ran in "
                "this cell, so no replay can verify it: call it in the cell",
            )
        if not ctx.specs:
            return refused(
                self.source,
                full.sites,
                "the cell touched no array library: no backend to verify the rewrite on",
            )
        if self.plan is None or (self.plan.capture is None and not self.plan.in_process):
            return refused(self.source, full.sites, "its inputs could not be captured")
        left = {k: not_run_reason(idle, k[0]) for k in unrun}
        candidate = full if not unrun else self._propose(namespace, every)
        best = self.replay(candidate, every, ctx)
        if not best.accepted and not best.skipped:
            best = self._narrow(best, ctx)
        if best is None or not best.accepted:
            why = self.rounds[0].why if self.rounds else "it did not verify"
            return refused(self.source, full.sites, why, {**site_reasons(self.rounds[1:]), **left})
        final = self._propose(namespace, best.keys)
        left = {**self.dropped, **left}
        accepted = accepted_entry(
            final,
            best,
            ctx.specs,
            self.rounds,
            unexercised_specs(entry.replays),
            left,
            entry,
        )
        accepted = self._check_sites(accepted, ctx, entry, best)
        return with_draws_note(accepted, self.judge.drawn)

    def _check_sites(
        self, accepted: RewriteEntry, ctx: Verification, entry: CellEntry, best: Round
    ) -> RewriteEntry:
        """``accepted`` with its sites checked at their calls on the libraries the cell as
        a whole did not verify on (`porter_ext.fix.site_checks`): one more replay on the
        original backend, its rewritten expressions marked. A library neither the cell nor
        its rewrite touched (``not applicable``) is not one of them; one the accepted
        round's replay touched (the person's draws moved there) is."""
        from porter_ext.compare.pipeline import replay_entries
        from porter_ext.fix.site_checks import checked_sites, marked
        from porter_ext.replay.analysis import analyse
        from porter_ext.replay.probes import PROBE

        original = str(ctx.specs[0])
        unexercised = unexercised_specs(entry.replays)
        unexercised &= {e.backend for e in best.entries if e.status == "not_exercised"}
        missing = [
            str(s)
            for s in ctx.specs[1:]
            if str(s) not in accepted.verified_on and str(s) not in unexercised
        ]
        if not missing or original not in accepted.verified_on or self.plan.in_process:
            return accepted
        source, marks = marked(accepted.source, accepted.sites)
        if not marks.texts:
            return accepted
        code = self.prefix + self.code_of(source)
        io = analyse(code)
        plan = dataclasses.replace(
            self.plan,
            io=dataclasses.replace(io, inputs=tuple(n for n in io.inputs if n != PROBE)),
            specs=[ctx.specs[0]],
            control=False,
            capture=kept_capture(self.plan.capture),
        )
        settings = dataclasses.replace(
            round_settings(ctx), probes=tuple(marks.texts.items()), probe_specs=tuple(missing)
        )
        entries, _ = replay_entries(plan, code, ctx.namespace, ctx.run, settings, ctx.policy)
        replay = next((e for e in entries if e.role == "target"), None)
        if replay is None:
            return accepted
        return checked_sites(accepted, replay, marks, missing, ctx.policy, entry.first_line)

    def _parameters(self, entry: CellEntry, namespace: Mapping[str, Any]) -> dict[str, str]:
        """`array_parameters` of the cell's functions that nothing in it runs, under
        ``porter fix`` (where a later call verifies them) and where the notebook imported
        one array library."""
        from porter_ext.backends import backend_of_module

        if not (self.in_effect and self.session is not None and self.index is not None):
            return {}
        libraries = {
            backend.name
            for module in namespace_imports(namespace).values()
            if (backend := backend_of_module(module)) is not None
        }
        if len(libraries) != 1:
            return {}
        idle = unexercised_defs(mask_magics(self.source)[0], entry.calls)
        return array_parameters(self.source, idle, libraries.pop()) if idle else {}

    def _specs(self, run: CellRun) -> list:
        from porter_ext.replay.dispatch import control_spec

        original = control_spec(self.plan.inputs.values(), run.calls) if self.plan else None
        specs = [original] if original is not None else []
        for spec in self.requested:
            if str(spec) not in {str(s) for s in specs}:
                specs.append(spec)
        return specs

    # -- the rounds --------------------------------------------------------------------
    def replay(
        self,
        candidate: CellRewrite,
        keys: frozenset,
        ctx: Verification,
        prefix: str | None = None,
        judge: Judge | None = None,
    ) -> Round:
        """One replay of ``candidate`` (after ``prefix``: verified definitions of earlier
        cells, `FixRun.prefix` by default), judged by ``judge`` (`FixRun.judge` by
        default, `judged`)."""
        from porter_ext.compare.pipeline import replay_entries
        from porter_ext.replay.analysis import analyse

        prefix = self.prefix if prefix is None else prefix
        code = prefix + self.code_of(candidate.source)
        plan = dataclasses.replace(
            self.plan,
            io=analyse(code),
            specs=list(ctx.specs),
            control=False,
            capture=kept_capture(self.plan.capture),
        )
        settings = round_settings(ctx)
        entries, _ = replay_entries(plan, code, ctx.namespace, ctx.run, settings, ctx.policy)
        targets = [e for e in entries if e.role == "target"]
        targets = slow_replays(targets, ctx.settings, ctx.run.seconds)
        judge = self.judge if judge is None else judge
        result = judged(keys, candidate.source, targets, judge, ctx, prefix.count("\n"))
        self.rounds.append(result)
        return result

    def _narrow(self, failed: Round, ctx: Verification) -> Round | None:
        """The largest set of sites that verifies, found in a few rounds (see module doc)."""
        keys = set(failed.keys)
        if failed.failed_line is not None:
            keys = {k for k in keys if k[0] != failed.failed_line}
            if keys and keys != set(failed.keys):
                again = self._try(keys, ctx)
                if again.accepted:
                    return again
        alone = {key: self._try({key}, ctx) for key in sorted(keys)[:MAX_SINGLE_TRIES]}
        good = [key for key, result in alone.items() if result.accepted]
        if len(good) <= 1:
            return alone[good[0]] if good else None
        together = self._try(set(good), ctx)
        if together.accepted:
            return together
        # each verifies alone, not all at once: kept one by one while the rest verifies
        kept, best = {good[0]}, alone[good[0]]
        for key in good[1:]:
            trial = self._try(kept | {key}, ctx)
            if trial.accepted:
                kept, best = kept | {key}, trial
            else:
                self.dropped[key] = f"left out: with the others, {trial.why}"
        return best

    def _try(self, keys: set, ctx: Verification) -> Round:
        candidate = self._propose(ctx.namespace, keys)
        return self.replay(candidate, frozenset(site_key(s) for s in candidate.applied), ctx)


def _nothing_applied(sites: list[RewriteSiteEntry]) -> str:
    """Why a cell whose every site is left as written has no rewrite: the sites' one
    reason where they share it (a cell mixing libraries), else that an array subclass
    holds them (`own_semantics_reason`), else that no call has one."""
    reasons = {site.reason for site in sites}
    if len(reasons) == 1 and None not in reasons:
        return reasons.pop()
    held = [r for r in reasons if r is not None and r.endswith(OWN_SEMANTICS)]
    return held[0] if held else "no call here has a rewrite"
