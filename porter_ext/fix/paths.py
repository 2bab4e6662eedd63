"""The paths through a scope's statements for `porter_ext.fix.flow`: each binding is
logged so that a branch can be undone, arms of an ``if``/``match``/``try`` are walked from
the same start and joined, and a loop body is walked again while what its top sees
changes.

Loops: the body is walked once from what the statements before it left. When a name the
body reads before binding it comes out of the body as something else (``x`` an array
before the loop, a list after one pass), the body is walked again from the join, and a
third time, if need be, with such names unknown. All walks past the first together take
at most as long as the first walk, so the time stays linear in the source; past that,
the first walk stands.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from porter_ext.fix.scopes import UNBOUND, Frame, Loop, Record, bound_names, join
from porter_ext.fix.static import UNKNOWN

__all__ = ["Paths"]


class Paths(ast.NodeVisitor):
    """Walking statements along their paths; `porter_ext.fix.flow.FlowModel` builds on it."""

    frame: Frame
    sites: list
    records: list[Record]

    def __init__(self) -> None:
        self.step = 0  # counts bindings: when each value was given
        self.walked = self.rewalked = 0  # statements walked, and walked again in loops
        #: where a statement's bindings are written down as they are made, (name, value)
        #: in order (`porter_ext.fix.repeated` replays them); None: nowhere
        self.tape: list[tuple[str, object]] | None = None

    def _set(self, frame: Frame, name: str, value: object) -> None:
        if value is UNBOUND:  # not bound on this path: the name is left out of the scope
            frame.env.pop(name, None)
        else:
            frame.env[name] = value
        if frame.history is not None:
            self.step += 1
            steps, values = frame.history.setdefault(name, ([], []))
            steps.append(self.step)
            values.append(value)

    def assign(self, name: str, value: object) -> None:
        frame = self.frame
        while frame.kind == "local":  # a := in a comprehension binds in the enclosing scope
            frame = frame.parent  # type: ignore[assignment]
        if frame.logs:
            frame.logs[-1].append((name, frame.env.get(name, UNBOUND)))
        for loop in frame.loops:
            loop.assigned.add(name)
        if self.tape is not None:
            self.tape.append((name, value))
        self._set(frame, name, value)

    def _body(self, body: list[ast.stmt]) -> None:
        self.walked += len(body)
        for statement in body:
            self.visit(statement)

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        self._arms([lambda: self._body(node.body), lambda: self._body(node.orelse)])

    def visit_Match(self, node: ast.Match) -> None:
        self.visit(node.subject)

        def arm(case: ast.match_case) -> Callable[[], None]:
            def walk() -> None:
                for name in bound_names(case.pattern):
                    self.assign(name, UNKNOWN)
                self.visit(case.pattern)
                if case.guard is not None:
                    self.visit(case.guard)
                self._body(case.body)

            return walk

        arms = [arm(case) for case in node.cases]
        last = node.cases[-1]
        catch_all = isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
        if not catch_all or last.guard is not None:
            arms.append(lambda: None)  # no case matched
        self._arms(arms)

    def visit_Try(self, node: ast.Try) -> None:
        during: dict[str, object] = {}  # any value a name had in the body: where a handler starts

        def body() -> None:
            log = self.frame.logs[-1]
            mark = len(log)
            self._body(node.body)
            for name, before in log[mark:]:
                during[name] = join(during.get(name, UNBOUND), before)
            for name in during:
                during[name] = join(during[name], self.frame.env.get(name, UNBOUND))
            self._body(node.orelse)

        def handler(h: ast.ExceptHandler) -> Callable[[], None]:
            def walk() -> None:
                for name, value in during.items():
                    self.assign(name, value)
                if h.type is not None:
                    self.visit(h.type)
                if h.name:
                    self.assign(h.name, UNKNOWN)
                self._body(h.body)

            return walk

        self._arms([body, *(handler(h) for h in node.handlers)])
        self._body(node.finalbody)

    visit_TryStar = visit_Try

    def _arms(self, arms: list[Callable[[], None]]) -> None:
        """Walk each arm from the same start; then each name is what the arms agree on."""
        frame = self.frame
        before: dict[str, object] = {}
        merged: dict[str, object] = {}
        bound: dict[str, int] = {}
        logs = []
        for arm in arms:
            frame.logs.append([])
            arm()
            log = frame.logs.pop()
            names = dict.fromkeys(name for name, _ in log)
            for name, old in log:
                before.setdefault(name, old)
            for name in names:
                merged[name] = join(merged.get(name, UNBOUND), frame.env.get(name, UNBOUND))
                bound[name] = bound.get(name, 0) + 1
            self._undo(frame, log)
            logs.append(log)
        if frame.logs:
            for log in logs:
                frame.logs[-1].extend(log)
        for name, old in before.items():
            value = merged[name] if bound[name] == len(arms) else join(merged[name], old)
            self._set(frame, name, value)

    def _undo(self, frame: Frame, log: list[tuple[str, object]]) -> None:
        for name, old in reversed(log):
            self._set(frame, name, old)

    def visit_Break(self, node: ast.Break | ast.Continue) -> None:
        if self.frame.loops:
            self.frame.loops[-1].jumps = True

    visit_Continue = visit_Break

    def visit_While(self, node: ast.While) -> None:
        self._loop(lambda: self.visit(node.test), node.body)
        self._body(node.orelse)

    def _loop(self, head: Callable[[], None], body: list[ast.stmt]) -> None:
        frame = self.frame
        mark = self._mark()
        forced: dict[str, object] = {}  # what the top of the body starts from, past the first walk
        for attempt in range(3):
            loop = Loop()
            frame.logs.append([])
            for name, value in forced.items():
                self.assign(name, value)
            frame.loops.append(loop)
            start = self.walked
            head()
            self._body(body)
            frame.loops.pop()
            log = frame.logs.pop()
            before: dict[str, object] = {}
            after: dict[str, object] = {}
            for name, old in log:
                if name not in before:
                    before[name] = after[name] = old
                elif loop.jumps:
                    after[name] = join(after[name], old)
            for name in after:
                value = join(after[name], forced.get(name, UNBOUND))
                after[name] = join(value, frame.env.get(name, UNBOUND))
            changed = {n for n, v in after.items() if v != forced.get(n, before[n])}
            if attempt == 2 or not changed & loop.reads or not self._may_rewalk():
                break
            self._undo(frame, log)
            self._rewind(mark)
            self.rewalked += self.walked - start
            if attempt == 0:
                forced.update((name, after[name]) for name in changed)
            else:
                forced = dict.fromkeys(after, UNKNOWN)
        if frame.logs:
            frame.logs[-1].extend(log)
        for name, value in after.items():
            self._set(frame, name, value)

    def _mark(self) -> tuple[int, ...]:
        """Where the findings and the functions met so far end (to walk a body again)."""
        return (len(self.sites), len(self.frame.deferred), len(self.records))

    def _rewind(self, mark: tuple[int, ...]) -> None:
        del self.sites[mark[0] :]
        del self.frame.deferred[mark[1] :]
        del self.records[mark[2] :]

    def _may_rewalk(self) -> bool:
        return self.rewalked < self.walked - self.rewalked + 1000
