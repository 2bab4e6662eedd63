"""The one guard for porter's own failures.

porter must never break the person's cell, so its internal errors are caught where they
happen, turned into a porter warning the person sees, and the work goes on without the
piece that failed. Under ``PORTER_DEBUG=1`` (the test suite sets it) the same errors are
re-raised instead, so that a bug in a condition function or a device reader fails a test
rather than silently dropping a finding.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["INTERNAL_MARK", "PorterInternalError", "debug", "guarded", "internal_error"]

#: what every internal failure's warning says after what failed (a headless run finds
#: them in the kernel's outputs by it)
INTERNAL_MARK = " failed inside porter ("


class PorterInternalError(RuntimeError):
    """Raised under ``PORTER_DEBUG=1`` for a failure inside porter's own code."""


def debug() -> bool:
    """Whether porter's internal errors are re-raised (``PORTER_DEBUG`` set and not 0)."""
    return os.environ.get("PORTER_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def internal_error(what: str, error: BaseException, warnings: list[str] | None = None) -> str:
    """Record that porter failed while doing ``what``; returns the warning text.

    Appends the warning to ``warnings`` when given and not there yet (a failure in a
    loop is one warning), else prints it to stderr. Under ``PORTER_DEBUG=1`` raises
    `PorterInternalError` from ``error`` instead.
    """
    text = f"porter: {what}{INTERNAL_MARK}{type(error).__name__}: {error})"
    if debug():
        raise PorterInternalError(text) from error
    if warnings is not None:
        if text not in warnings:
            warnings.append(text)
    else:
        print(text, file=sys.stderr)
    return text


@contextlib.contextmanager
def guarded(what: str, warnings: list[str] | None = None) -> Iterator[None]:
    """Run a block of porter's own work; a failure becomes `internal_error(what, ...)`.

    ``KeyboardInterrupt`` and ``SystemExit`` pass through untouched.
    """
    try:
        yield
    except Exception as error:
        internal_error(what, error, warnings)
