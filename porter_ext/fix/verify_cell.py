"""``--fix`` for one cell, as the session's cell path calls it (`porter_ext.session.cell`):
where its rewrite is verified (`FixPlace`), the capture made before the run (`start`)
and the verdict after the run and the ordinary replays (`finish`). The rounds
themselves are `porter_ext.fix.verify.FixRun`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from porter_ext.fix.deferred import called_deferred
from porter_ext.fix.every_call import originals_for_the_run
from porter_ext.fix.verify import FixRun
from porter_ext.fix.verify_rounds import SLOW_REPLAY, limited, slow_replays
from porter_ext.fix.verify_support import code_reading

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from porter_ext.compare.pipeline import ReplayJob
    from porter_ext.model.cells import CellEntry
    from porter_ext.record.cell import CellRun
    from porter_ext.replay.plan import ReplayPlan
    from porter_ext.replay.workers import WorkerPool

__all__ = ["FixPlace", "finish", "prepare", "start"]


@dataclass(frozen=True)
class FixPlace:
    """Where a cell's rewrite is verified: the worker ``pool`` its rounds replay in (None:
    in the person's process, ``in_process``), the ``shell`` whose transformations the
    rewrite gets, and under ``porter fix`` (``in_effect``: later cells are verified with
    the earlier cells' rewrites in effect) the ``owner`` of the deferred definitions (the
    session) and the notebook ``index`` of the cell; ``cell`` is its recorder label."""

    pool: WorkerPool | None = None
    shell: InteractiveShell | None = None
    in_process: bool = False
    in_effect: bool = False
    owner: object | None = None
    index: int | None = None
    cell: int | str = "fix"


def prepare(
    source: str, code: str, namespace: MutableMapping[str, Any], specs: list, place: FixPlace
) -> FixRun:
    """Before the original run: capture the cell's inputs for the verification rounds,
    with the names of the person's namespace that the rewrite reads and the cell does not
    (an earlier cell's ``array_namespace`` import, an array ``xp`` is taken from), and
    those of the earlier cells' deferred definitions the cell calls (``porter fix``); the
    rewritten functions in effect give their names back to the person's functions for the
    run (`porter_ext.fix.every_call`)."""
    fix = FixRun(
        source,
        None,
        list(specs),
        shell=place.shell,
        in_effect=place.in_effect,
        cell=place.cell,
        session=place.owner,
        index=place.index,
    )
    owner = place.owner
    if place.in_effect and owner is not None:
        fix.deferred = called_deferred(owner, code, namespace)
        # the cell runs the person's functions; its replays may put the portable ones first
        fix.ported = originals_for_the_run(owner, namespace)
    near = reached(code, fix.ported)
    fix.plan = _plan(fix, code, namespace, specs, place, [*fix.ported])
    capture = fix.plan.capture
    far = {n for e in fix.ported if e not in near for n in e.definition.names}
    if capture is not None and capture.unsent in far:
        # a function in effect the cell does not reach cannot travel (a lock in it):
        # its rounds go without it rather than not at all
        capture.release()
        fix.plan = _plan(fix, code, namespace, specs, place, near)
    return fix


def _plan(
    fix: FixRun,
    code: str,
    namespace: MutableMapping[str, Any],
    specs: list,
    place: FixPlace,
    ported: list,
) -> ReplayPlan:
    """The plan of the cell's rounds, its ``ported`` functions in effect and the deferred
    definitions it calls put before it."""
    from porter_ext.backends import HOST_LIBRARY, BackendSpec
    from porter_ext.compare.pipeline import plan

    definitions = [*(e.definition for e in ported), *fix.deferred]
    prefix = "".join(d.code for d in definitions)
    # the functions as the namespace holds them too: a round whose prefix leaves out a
    # refused one calls the original definition
    defined = sorted({name for d in definitions for name in d.names})
    # a spec so that the pipeline captures (the real ones are known after the run)
    warm = list(specs) or [BackendSpec(HOST_LIBRARY)]
    return plan(
        code_reading(prefix + code, fix._new_inputs(code, namespace), first=defined),
        namespace,
        warm,
        pool=place.pool,
        control=False,
        in_process=place.in_process,
    )


def reached(code: str, entries: list) -> list:
    """The functions in effect (`porter_ext.fix.every_call.InEffect`) that ``code`` reaches:
    those it reads by name, and those their code reads in turn. Where another function in
    effect cannot travel with the cell's rounds (a function shown through ipywidgets'
    ``interact`` holds a lock), only these do: a cell that never calls it had every round
    skipped for it."""
    from porter_ext.replay.analysis import analyse

    try:
        reads = set(analyse(code).inputs)
    except SyntaxError:
        return list(entries)
    kept: list = []
    grew = True
    while grew:
        grew = False
        for entry in entries:
            if entry in kept or not reads & set(entry.definition.names):
                continue
            kept.append(entry)
            grew = True
            try:
                reads |= set(analyse(entry.definition.code).inputs)
            except SyntaxError:
                continue
    return [e for e in entries if e in kept]


def start(
    source: str, code: str, namespace: MutableMapping[str, Any], specs: list, place: FixPlace
) -> FixRun | None:
    """``--fix``, before the original run; None (with porter's warning) when it fails."""
    from porter_ext.guard import internal_error

    try:
        return prepare(source, code, namespace, specs, place)
    except SyntaxError:  # the run reports it
        return None
    except Exception as exc:
        internal_error("preparing the rewrite of this cell (--fix)", exc)
        return None


def replay_job(job: ReplayJob, run: CellRun) -> ReplayJob:
    """The job of a ``--fix`` cell's own replays, which serve its verification: stopped
    where its rounds are (`porter_ext.fix.verify_rounds.limited`)."""
    return dataclasses.replace(job, settings=limited(job.settings, run.seconds))


def finish(
    fix: FixRun, entry: CellEntry, namespace: MutableMapping[str, Any], run: CellRun, job: ReplayJob
) -> tuple[CellEntry, list[str]]:
    """``--fix``, after the replays (``job``: their settings and policy, the rounds'
    too, as the person gave them): the entry, each replay stopped at porter's limit
    saying so, with its verified (or refused) rewrite, and porter's warnings."""
    from porter_ext.guard import internal_error

    replays = slow_replays(entry.replays, job.settings, run.seconds, SLOW_REPLAY)
    entry = dataclasses.replace(entry, replays=replays)
    warnings: list[str] = []
    try:
        return fix.verify(entry, namespace, run, job.settings, job.policy), warnings
    except Exception as exc:
        internal_error("verifying the rewrite of this cell (--fix)", exc, warnings)
        return entry, warnings
