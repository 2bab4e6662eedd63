"""``%%port`` cells of several threads take turns.

The recorder watches one cell at a time (its hooks are the process's), and the worker
pool replays one cell's inputs at a time. So a ``%%port`` cell that a thread of the
person's process starts while another thread's cell runs waits for its turn, and then
records its own calls. A cell of the same thread (a cell that runs a cell) goes on.

The running cell may itself be waiting for the thread that waits (its code started that
thread and joins it). So a cell that has waited `WAIT_FOR_RUN` seconds while the other
thread's recorded code ran does not wait any longer: it runs unrecorded and says so,
and nothing of it enters the report.
"""

from __future__ import annotations

import threading
import time

from porter_ext.record.hooks_importlib_bootstrap import STATE

#: seconds a cell waits while another thread's recorded code runs (it may be waiting for
#: this cell), before it runs unrecorded
WAIT_FOR_RUN = 10.0
_POLL = 0.05


class CellTurns:
    """Whose turn it is to record a cell: one thread at a time, re-entrant."""

    def __init__(self, wait_for_run: float = WAIT_FOR_RUN):
        self.wait_for_run = wait_for_run
        self._changed = threading.Condition()
        self._owner: int | None = None
        self._depth = 0

    def take(self) -> str | None:
        """Wait for this thread's turn: None once it has it (`release` gives it back),
        else why this cell cannot be recorded."""
        me = threading.get_ident()
        waited_on_run: float | None = None
        with self._changed:
            while True:
                recorder = STATE.active  # a cell's own code running, recorded
                other_run = recorder is not None and getattr(recorder, "thread", me) != me
                if self._owner in (None, me) and not other_run:
                    self._owner = me
                    self._depth += 1
                    return None
                if not other_run:
                    waited_on_run = None
                elif waited_on_run is None:
                    waited_on_run = time.monotonic()
                elif time.monotonic() - waited_on_run >= self.wait_for_run:
                    return (
                        "porter: this %%port cell ran unrecorded: another thread's recorded "
                        f"cell was running for {self.wait_for_run:g} s (it may be waiting for "
                        "this one); nothing of this cell is in the report"
                    )
                self._changed.wait(_POLL)

    def release(self) -> None:
        with self._changed:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._changed.notify_all()


#: the process's turns: the recorder's hooks are the process's, whatever the shell
TURNS = CellTurns()
