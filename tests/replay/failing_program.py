"""A worker program (``worker_kernel.use_program``) that fails inside porter while
finishing a replay, for tests/replay/test_worker_program.py."""

from __future__ import annotations

from typing import Any

from porter_ext.guard import internal_error
from porter_ext.replay import worker_side


def run(request_id: str) -> None:
    worker_side.run(request_id, finish=_finish)


def _finish(result: Any, outputs: dict[str, Any], backend: Any) -> None:
    try:
        raise LookupError("a finisher that has a bug")
    except LookupError as error:
        internal_error("finishing the replay", error)
