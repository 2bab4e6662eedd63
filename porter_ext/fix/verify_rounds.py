"""The verification rounds of ``--fix`` (`porter_ext.fix.verify`): one round's
replays judged against the original (issue 19 item 2: the rewrite, not the backend's
settings), and what a round reads.

A replay of the rewrite on a backend is compared with the original cell's own replay on
that backend where the original runs there: what the backend alone changes (JAX's
default float32 for a float64 cell) shows there too and is not held against the
rewrite. Where the original does not run there, it is compared with the original run,
and a dtype that is the backend's default for the original's is the backend's doing;
the values are still judged, at the narrower dtype's precision (the compare stage).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from porter_ext.model.comparison import DIFFERING_VERDICTS
from porter_ext.model.entries import ReplayEntry
from porter_ext.model.report import NON_STANDARD_STATUSES

if TYPE_CHECKING:
    from collections.abc import Iterable

    from porter_ext.compare.tolerance import TolerancePolicy
    from porter_ext.fix.draws import Drawn
    from porter_ext.model.calls import CallOrigin, CallRecord
    from porter_ext.model.comparison import OutputComparison
    from porter_ext.record.cell import CellRun
    from porter_ext.replay.capture import Capture
    from porter_ext.replay.run import ReplaySettings

_Key = tuple[int, int, str]
#: the differences that judge an output drawn by a generator the backend does not have
STRUCTURE = frozenset({"dtype_changed", "shape_changed"})


@dataclass
class Round:
    """One verification replay of a candidate rewrite."""

    keys: frozenset
    source: str
    entries: list[ReplayEntry]
    accepted: bool
    verified_on: list[str]
    why: str | None = None
    #: the line a replay failed at, and the spec it failed on
    failed_line: int | None = None
    #: the lines of earlier cells' definitions replayed before it (its replays' lines
    #: count them)
    shift: int = 0
    #: backend → the outputs that differ there exactly as the original cell's own replay
    #: there differs (`Judge.as_the_original`): a site left as written, not the rewrite
    inherited: dict[str, list[str]] = field(default_factory=dict)

    @property
    def skipped(self) -> bool:
        """Whether its replays were skipped (inputs that cannot be sent): no narrower
        rewrite replays either."""
        return bool(self.entries) and all(e.status == "skipped" for e in self.entries)


@dataclass(frozen=True)
class Verification:
    """What every round of one cell is replayed from and judged by: the backends (the
    original's first), the person's namespace and the original run, the replay settings
    and tolerance policy, and the original run's count of findings."""

    specs: list
    namespace: Mapping[str, Any]
    run: CellRun
    settings: ReplaySettings
    policy: TolerancePolicy
    baseline: int


#: a replay of a ``--fix`` cell, its rounds' too, may run this many times as long as the
#: person's run of the cell (and at least `ROUND_FLOOR_S`) before it is stopped: an update
#: through ``xpx.at`` in a Python loop copies the whole array at every step on JAX, so a
#: rewrite that verifies in a moment on NumPy may not end there for hours (and once put
#: in effect, neither do the replays of the later cells that call it); a port that slow
#: is no port
ROUND_SLOWDOWN = 20.0
ROUND_FLOOR_S = 30.0


def round_limit(settings: ReplaySettings, seconds: float) -> float | None:
    """porter's own time limit on the replays of a ``--fix`` cell whose run took
    ``seconds``: `ROUND_SLOWDOWN` times that (at least `ROUND_FLOOR_S`); None where the
    person's ``--timeout`` is the tighter one."""
    limit = max(ROUND_FLOOR_S, ROUND_SLOWDOWN * seconds)
    return limit if settings.timeout is None or settings.timeout > limit else None


def limited(settings: ReplaySettings, seconds: float) -> ReplaySettings:
    """``settings`` with the tighter of the person's ``--timeout`` and `round_limit`."""
    limit = round_limit(settings, seconds)
    return settings if limit is None else dataclasses.replace(settings, timeout=limit)


def round_settings(ctx: Verification) -> ReplaySettings:
    """The settings of a round's replays: the cell's, limited (`limited`), the person's
    generator draws moved to the other libraries (`porter_ext.fix.draws`)."""
    return dataclasses.replace(limited(ctx.settings, ctx.run.seconds), moves_draws=True)


#: what a round stopped at porter's limit means, and what a ``--fix`` cell's replay does
SLOW_ROUND = "a rewrite that much slower there is not verified"
SLOW_REPLAY = "porter fix stops its replays there (porter run waits up to --timeout)"


def slow_replays(
    replays: list[ReplayEntry], settings: ReplaySettings, seconds: float, why: str = SLOW_ROUND
) -> list[ReplayEntry]:
    """``replays``, each stopped at porter's own limit (`round_limit`) saying so, and
    ``why`` it stopped."""
    limit = round_limit(settings, seconds)
    if limit is None:
        return replays
    return [
        dataclasses.replace(
            e,
            reason=f"stopped after {limit:.0f} s, {ROUND_SLOWDOWN:g} times your run of the "
            f"cell: {why}",
        )
        if e.status == "timeout"
        else e
        for e in replays
    ]


def judged(
    keys: frozenset,
    source: str,
    targets: list[ReplayEntry],
    judge: Judge,
    ctx: Verification,
    shift: int = 0,
) -> Round:
    """The round of ``source`` (its sites ``keys``) whose replays are ``targets``: accepted
    when no replay that ran gives another result (`Judge.agrees`), it runs on the
    original backend, and it has fewer findings than the original or is verified on
    every backend the original cell runs on (a site that removes no finding by itself,
    ``.item()`` or a call through ``xp``, is kept when it verifies there). ``shift``: the
    lines of earlier cells' definitions replayed before it."""
    original = str(ctx.specs[0])
    verified = [e.backend for e in targets if judge.agrees(e)]
    result = Round(keys, source, targets, False, verified, shift=shift)
    for e in targets:
        if e.status == "ok" and e.backend not in verified and e.backend != original:
            same = judge.as_the_original(e)
            if same:
                result.inherited[e.backend] = same
    changed = [
        e
        for e in targets
        if e.status == "ok" and e.backend not in verified and e.backend not in result.inherited
    ]
    first = next((e for e in targets if e.backend == original), None)
    missing = sorted(judge.ran_on(original) - set(verified) - result.inherited.keys())
    if changed:
        where = ", ".join(e.backend for e in changed)
        result.why = f"it changes the result on {where} ({judge.what_differs(changed[0])})"
    elif first is not None and first.status == "skipped":
        # the cell ran; its replays could not (a backward pass through an input whose
        # autograd graph stayed behind, a place that does not answer): nothing was
        # verified, and that is why
        result.why = f"not verified: the replays were skipped ({skip_reason(first)})"
    elif first is None or first.backend not in verified:
        error = first.error if first is not None else None
        line = error.line if error is not None else None
        if line is not None and shift:
            line = line - shift if line > shift else None
        result.failed_line = line
        where = (
            f"at line {line}"
            if line is not None or not shift
            else "in the definitions of an earlier cell"
        )
        detail = (
            f"{error.type} {where}: {error.message}"
            if error
            else (first.status if first is not None else "no replay")
        )
        result.why = f"it does not run on {original}, the original backend ({detail})"
    elif first.calls is not None and finding_count(first.calls) > ctx.baseline:
        result.why = "it has more findings than the original"
    elif first.calls is not None and finding_count(first.calls) == ctx.baseline and missing:
        result.why = (
            "it does not have fewer findings than the original, nor is it verified on "
            f"every backend the original cell runs on (not on {', '.join(missing)})"
        )
    else:
        result.accepted = True
    return result


def site_reasons(rounds: list[Round]) -> dict[_Key, str]:
    """Why each site tried alone (in one of the narrowing ``rounds``) did not verify."""
    return {
        next(iter(r.keys)): f"left out: alone, {r.why}"
        for r in rounds
        if len(r.keys) == 1 and not r.accepted and r.why
    }


def agrees(
    replay: ReplayEntry,
    original: ReplayEntry | None = None,
    defaults: Mapping[str, str] | None = None,
    loose: frozenset[str] | None = frozenset(),
) -> bool:
    """The compare stage's verdict on a replay of the rewrite: it ran, and every compared
    output agrees with the original run, or differs only as the original cell's own
    replay on the same backend (``original``) does (see `_the_backends`), or, where the
    original did not run there, only by the dtype the backend's defaults make of the
    original's (``defaults``: output → that dtype; see `_the_defaults`). The outputs
    named in ``loose`` (None: every one) depend on draws this backend cannot make
    (`porter_ext.fix.draws`): judged by shape, dtype and finiteness only."""
    return replay.status == "ok" and not _differing(replay, original, defaults, loose)


def _differing(
    replay: ReplayEntry,
    original: ReplayEntry | None,
    defaults: Mapping[str, str] | None,
    loose: frozenset[str] | None = frozenset(),
) -> list:
    return [
        out
        for out in replay.outputs
        if _differs(out, loose)
        and not _the_backends(out, original)
        and not _the_defaults(out, original, defaults or {})
        and not _widened(out)
    ]


def _widened(out: OutputComparison) -> bool:
    """Whether ``out`` differs only by a wider floating dtype of the same kind, its values
    within tolerance (judged at the original's narrower precision): an array the rewrite
    creates through ``xp`` without a dtype is the backend's default float (NumPy's
    float64 where torch's is float32), and computing in more precision is no change
    of result. A narrower dtype is (float32 in a float64 cell)."""
    if out.difference != "dtype_changed" or out.within_tolerance is not True:
        return False
    if out.dtype is None or out.expected_dtype is None:
        return False
    try:
        was, now = np.dtype(out.expected_dtype), np.dtype(out.dtype)
    except TypeError:  # bfloat16 and other names NumPy does not know
        return False
    return was.kind == now.kind and was.kind in "fc" and now.itemsize > was.itemsize


def _differs(out: OutputComparison, loose: frozenset[str] | None) -> bool:
    """Whether ``out`` differs from the original's: by value, or, where it depends on
    draws the backend cannot make (``loose``), by shape, dtype or finiteness only."""
    if loose is None or re.split(r"[\[.]", out.name, maxsplit=1)[0] in loose:
        return out.difference in STRUCTURE or bool(out.nan_mismatch)
    return out.verdict in DIFFERING_VERDICTS


def _the_backends(out: OutputComparison, original: ReplayEntry | None) -> bool:
    """Whether a difference of the rewrite's output ``out`` is the backend's, not the
    rewrite's: the original cell replayed on the same backend shows the same kind of
    difference for it, with the same dtype and shape (jax's default float32 for a
    float64 cell, an int32 default), and the rewrite's values are within tolerance."""
    if original is None or original.status != "ok" or out.within_tolerance is False:
        return False
    twin = next((o for o in original.outputs if o.name == out.name), None)
    return (
        twin is not None
        and twin.difference == out.difference
        and twin.within_tolerance is not False
        and (twin.dtype, twin.shape) == (out.dtype, out.shape)
    )


def _same_difference(out: OutputComparison, twin: OutputComparison | None) -> bool:
    """Whether ``twin`` (the original cell's output on the same backend) differs from the
    original run exactly as ``out`` does."""
    fields = (
        "difference",
        "within_tolerance",
        "mismatched",
        "max_abs_err",
        "nan_mismatch",
        "dtype",
        "shape",
    )
    return twin is not None and all(getattr(out, f) == getattr(twin, f) for f in fields)


def _the_defaults(
    out: OutputComparison, original: ReplayEntry | None, defaults: Mapping[str, str]
) -> bool:
    """Whether ``out`` differs only by its dtype, and that dtype is the one the backend's
    defaults make of the original run's (``defaults``), where the original cell did not
    run on the backend (so nothing there shows what the backend alone changes). Its
    values were judged at the narrower dtype's precision (the compare stage)."""
    if original is not None and original.status == "ok":
        return False
    return (
        out.difference == "dtype_changed"
        and out.within_tolerance is True
        and out.dtype is not None
        and defaults.get(out.name) == out.dtype
    )


@dataclass
class Judge:
    """How one cell's rounds are judged, backend by backend (issue 19 item 2): against the
    original cell's own replay there where it ran there (``replays``), else against the
    original run, whose outputs' dtypes (``dtypes``: output → dtype) tell which dtype
    change is the backend's default (JAX without x64: float64 → float32)."""

    replays: Mapping[str, ReplayEntry] = field(default_factory=dict)
    dtypes: Mapping[str, str] = field(default_factory=dict)
    #: what the cell drew through a library's own generator (`porter_ext.fix.draws`)
    drawn: Drawn | None = None

    def agrees(self, replay: ReplayEntry) -> bool:
        original = self.replays.get(replay.backend)
        return agrees(replay, original, self._defaults(replay), self._loose(replay))

    def _loose(self, replay: ReplayEntry) -> frozenset[str] | None:
        if self.drawn is None:
            return frozenset()
        return self.drawn.loose(replay.backend.partition(":")[0])

    def as_the_original(self, replay: ReplayEntry) -> list[str]:
        """The outputs of ``replay`` that differ from the original run, where every one of
        them differs exactly as in the original cell's own replay on that backend (the
        same verdict, error and values: ``np.median`` of a tensor, a line the rewrite left
        as written); empty where any differs otherwise, or the original did not run there.
        Such a backend verifies nothing, and the rewrite changed nothing there."""
        original = self.replays.get(replay.backend)
        if original is None or original.status != "ok":
            return []
        differing = _differing(replay, original, self._defaults(replay), self._loose(replay))
        twins = {o.name: o for o in original.outputs}
        if all(_same_difference(o, twins.get(o.name)) for o in differing):
            return [o.name for o in differing]
        return []

    def ran_on(self, original: str) -> set[str]:
        """The backends the original cell ran on: its own, and those its replay ran on."""
        return {original} | {b for b, r in self.replays.items() if r.status == "ok"}

    def what_differs(self, replay: ReplayEntry) -> str:
        original = self.replays.get(replay.backend)
        for out in _differing(replay, original, self._defaults(replay), self._loose(replay)):
            kind = out.difference or "numeric"
            return f"{out.name}: {kind}, max abs err {out.max_abs_err}"
        return "an output differs"

    def _defaults(self, replay: ReplayEntry) -> dict[str, str]:
        """Output → the dtype the backend of ``replay`` makes of the original's, for the
        outputs whose dtype changed there where the original cell did not run (the
        library is asked only then)."""
        original = self.replays.get(replay.backend)
        changed = [o.name for o in replay.outputs if o.difference == "dtype_changed"]
        if not changed or (original is not None and original.status == "ok"):
            return {}
        from porter_ext.backends import get_backend, parse_spec

        backend = get_backend(parse_spec(replay.backend).library)
        if not backend.available()[0]:
            return {}
        found = {}
        for name in changed:
            dtype = self.dtypes.get(name)
            narrowed = backend.narrows(dtype) if dtype is not None else None
            if narrowed is not None:
                found[name] = narrowed
        return found


def original_dtypes(outputs: Mapping[str, Any]) -> dict[str, str]:
    """The dtype of each array leaf of the original run's ``outputs``, by the path the
    comparison names it with (``y[0]``)."""
    from porter_ext.backends import dtype_name
    from porter_ext.replay.run import leaves

    found = {}
    for name, value in outputs.items():
        for path, leaf in leaves(value, name, {}).items():
            if hasattr(leaf, "dtype") and hasattr(leaf, "shape"):
                found[path] = dtype_name(leaf)
    return found


def skip_reason(replay: ReplayEntry) -> str:
    """Why a replay was skipped, without the "not replayed: " every such reason opens with."""
    reason = replay.reason or "no reason given"
    return reason.removeprefix("not replayed: ")


def finding_count(calls: Iterable[CallRecord]) -> int:
    """Distinct non-standard sites (a loop's repeats are one finding): by where the cell
    made the call and where the code that made it is written. The person's run merges a
    site's repeats into one record; a replay's record of code written in another cell
    (a layer's ``x.view(...)``, called three times) may come as one record per call."""
    return len(
        {
            (c.line, c.col, c.name, *_written_at(c.origin))
            for c in calls
            if c.status in NON_STANDARD_STATUSES
        }
    )


def _written_at(origin: CallOrigin | None) -> tuple:
    return () if origin is None else (origin.file, origin.line, origin.col)


def kept_capture(capture: Capture | None) -> Capture | None:
    """The capture for one round: the pipeline releases what it replays from, and the
    next round needs the same pre-run inputs (released once, in `FixRun.verify`)."""
    if capture is None:
        return None
    from porter_ext.replay.capture import Capture

    class _Kept(Capture):
        def release(self) -> None:
            pass

    return _Kept(capture.parcel, capture.states, capture.unsendable, capture.slots)
