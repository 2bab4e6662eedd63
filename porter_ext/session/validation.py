"""The one check of every option a person gives porter, for the magics and the CLI alike.

A bad value must never reach the pipeline: there it would surface as a lost replay, a
traceback, or a limit that silently means "no limit". Each function here takes the text
the person typed and returns the value porter uses, or raises `OptionError` whose message
is one line naming the option, the value and what is accepted. The magics turn it into a
``UsageError`` (the cell does not run), the CLI into one line on stderr and exit 2.
"""

from __future__ import annotations

import math
import os
import shlex
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from porter_ext.report.write import same_file

__all__ = [
    "FAIL_KINDS",
    "REPORT_FORMATS",
    "MAX_SECONDS",
    "MAX_TOLERANCE",
    "OptionError",
    "OutputChoice",
    "backend_specs",
    "choice",
    "count",
    "fail_kinds",
    "input_file",
    "input_path",
    "notebook_output",
    "output_path",
    "report_output",
    "seconds",
    "split_words",
    "tolerance",
    "writable_directory",
]

#: a week: a longer limit on one cell is a typo, not a limit
MAX_SECONDS = 7 * 24 * 3600.0
#: tolerances beyond this accept any finite difference of any real data
MAX_TOLERANCE = 1e30
REPORT_FORMATS = ("html", "md", "json")
FAIL_KINDS = ("non_standard", "device", "mismatch", "replay_error", "any")
_SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


class OptionError(ValueError):
    """A value an option cannot take; the message is one line, ready to show."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


def _shown(text: object) -> str:
    value = str(text)
    return repr(value if len(value) <= 60 else value[:57] + "...")


def _number(text: Any, option: str) -> float:
    if isinstance(text, bool):
        raise OptionError(f"{option} needs a number, not {text!r}")
    if isinstance(text, int | float):
        value = float(text)
    else:
        raw = str(text).strip()
        if not raw:
            raise OptionError(f"{option} needs a number, got an empty value")
        try:
            value = float(raw)
        except (ValueError, OverflowError):
            raise OptionError(f"{option} needs a number, not {_shown(text)}") from None
    if not math.isfinite(value):
        raise OptionError(f"{option} must be a finite number, not {_shown(text)}")
    return value


def seconds(text: Any, option: str = "--timeout") -> float:
    """A time limit: finite, more than 0 (there is no "0 means no limit"), at most a week."""
    value = _number(text, option)
    if value <= 0:
        raise OptionError(f"{option} must be more than 0 seconds, not {_shown(text)}")
    if value > MAX_SECONDS:
        raise OptionError(f"{option} must be at most {MAX_SECONDS:.0f} seconds (a week)")
    return value


def folders(paths: Any, option: str = "--paths") -> list[str]:
    """Folders whose Python files are the person's code: each must be an existing folder
    (a file, or a path that is not there, is named in one line)."""
    if isinstance(paths, str):
        paths = [paths]
    found = []
    for path in paths:
        if not isinstance(path, str) or not path:
            raise OptionError(f"{option} takes a folder, not {_shown(path)}")
        expanded = os.path.expanduser(path)
        if not os.path.isdir(expanded):
            what = "is not a folder" if os.path.exists(expanded) else "does not exist"
            raise OptionError(f"{option} {path}: {what}")
        found.append(os.path.realpath(expanded))
    return found


def folder(text: Any, option: str = "--paths") -> str:
    """One folder of the person's code (`folders`)."""
    return folders([text], option)[0]


def tolerance(text: Any, option: str) -> float:
    """A comparison tolerance: finite, 0 or more, at most `MAX_TOLERANCE`."""
    value = _number(text, option)
    if value < 0:
        raise OptionError(f"{option} must not be negative, not {_shown(text)}")
    if value > MAX_TOLERANCE:
        raise OptionError(f"{option} must be at most {MAX_TOLERANCE:g}, not {_shown(text)}")
    return value


def count(text: Any, option: str, maximum: int = 10**9) -> int:
    """A whole number of things: 0 or more (digits only: no sign, point or exponent), at
    most ``maximum``."""
    raw = str(text).strip()
    if not raw.isascii() or not raw.isdigit():
        raise OptionError(f"{option} needs a whole number, 0 or more, not {_shown(text)}")
    value = int(raw)
    if value > maximum:
        raise OptionError(f"{option} must be at most {maximum}, not {_shown(text)}")
    return value


def choice(text: Any, option: str, choices: Iterable[str]) -> str:
    """One of `choices`, exactly."""
    options = list(choices)
    value = str(text).strip()
    if value not in options:
        raise OptionError(
            f"{option}: unknown value {_shown(text)}; choose from {', '.join(options)}"
        )
    return value


def fail_kinds(text: Any, option: str = "--fail-on") -> list[str]:
    """Comma-separated `FAIL_KINDS`, at least one."""
    kinds = [k.strip() for k in str(text).split(",") if k.strip()]
    if not kinds:
        raise OptionError(f"{option} needs at least one of {', '.join(FAIL_KINDS)}")
    for kind in kinds:
        choice(kind, option, FAIL_KINDS)
    return list(dict.fromkeys(kinds))


def backend_specs(text: Any, option: str = "--backends") -> list:
    """Comma-separated backend specs (`porter_ext.backends.parse_specs`), at least one,
    each with a device its library could have (``torch:cuda:x`` is no device anywhere; a
    device this machine lacks is skipped later, with its reason)."""
    from porter_ext.backends import SpecError, get_backend, parse_specs

    try:
        specs = parse_specs(str(text))
    except SpecError as exc:
        raise OptionError(f"{option}: {exc}") from None
    if not specs:
        raise OptionError(f"{option} needs at least one backend spec, e.g. numpy,torch")
    for spec in specs:
        wrong = (
            None
            if spec.device is None
            else get_backend(spec.library).misspelled_device(spec.device)
        )
        if wrong is not None:
            raise OptionError(f"{option}: {wrong}")
    return specs


def split_words(line: str, what: str) -> list[str]:
    """A magic's argument line split as a shell would, with unbalanced quotes an error."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise OptionError(f"{what}: cannot read the arguments ({exc}); check the quotes") from None


def input_file(text: Any, what: str, *, directories: bool = False) -> Path:
    """An existing, readable regular file (or, with `directories`, a directory)."""
    raw = str(text)
    if not raw.strip():
        raise OptionError(f"{what} needs a path, got an empty value")
    path = Path(raw)
    if path.is_dir() and not directories:
        raise OptionError(f"cannot read {path}: it is a directory")
    if not path.exists():
        raise OptionError(f"cannot read {path}: no such file")
    if not os.access(path, os.R_OK):
        raise OptionError(f"cannot read {path}: permission denied")
    return path


def _writable(directory: Path) -> bool:
    """Whether a file can be created in `directory`: tried, since permission bits do not
    tell (root, read-only mounts, /proc)."""
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".porter-probe-"):
            return True
    except OSError:
        return False


def input_path(text: Any, what: str = "PATH") -> Path:
    """An existing, readable file or directory."""
    return input_file(text, what, directories=True)


def writable_directory(text: Any, option: str) -> Path:
    """An existing directory porter may create files under (an install prefix)."""
    raw = str(text)
    if not raw.strip():
        raise OptionError(f"{option} needs a directory, got an empty value")
    path = Path(raw).expanduser()
    if not path.is_dir():
        what = "not a directory" if path.exists() else "no such directory"
        raise OptionError(f"{option} {path}: {what}")
    if not _writable(path):
        raise OptionError(f"{option} {path}: not writable")
    return path


def output_path(text: Any, option: str = "-o", *, source: Any = None) -> Path:
    """A path porter may write: not empty, not a directory, in a directory that exists
    and is writable (none is created unasked), and not the input `source`."""
    raw = str(text)
    if not raw.strip():
        raise OptionError(f"{option} needs a path, got an empty value")
    path = Path(raw).expanduser()
    if path.is_dir() or raw.endswith(("/", os.sep)):
        raise OptionError(f"{option} {path}: is a directory; give a file name")
    parent = path.parent
    if not parent.is_dir():
        raise OptionError(f"{option} {path}: the directory {parent} does not exist")
    if not _writable(parent) or (path.exists() and not os.access(path, os.W_OK)):
        raise OptionError(f"{option} {path}: not writable")
    if path.exists() and not path.is_file():
        raise OptionError(f"{option} {path}: not a regular file")
    if source is not None and same_file(path, source):
        raise OptionError(f"{option} {path} is the input itself; choose another output path")
    return path


def notebook_output(text: Any, option: str = "-o", *, source: Any = None) -> Path:
    """Where a notebook porter writes goes: an `output_path` whose name ends in .ipynb,
    so that nothing opens it as something else."""
    path = output_path(text, option, source=source)
    if path.suffix.lower() != ".ipynb":
        raise OptionError(
            f"{option} {path}: a notebook is written as .ipynb, not {path.suffix or 'no suffix'!r}"
        )
    return path


@dataclass(frozen=True)
class OutputChoice:
    """Where a report goes and in which format; `note` says when the suffix overruled
    the format asked for."""

    path: Path | None
    format: str
    note: str | None = None


def report_output(
    path: Any,
    fmt: Any,
    *,
    formats: Sequence[str] = REPORT_FORMATS,
    default: str = "json",
    option: str = "-o",
    source: Any = None,
) -> OutputChoice:
    """The report's path and format: the format is one of `formats`; a known suffix
    decides the format (winning over ``--format``, with a note); an unknown suffix is an
    error rather than a file whose name lies about its contents."""
    wanted = None if fmt is None else choice(fmt, "--format", formats)
    if path is None:
        return OutputChoice(None, wanted or default)
    out = output_path(path, option, source=source)
    suffix = out.suffix.lower()
    if not suffix:
        return OutputChoice(out, wanted or default)
    by_suffix = _SUFFIX_FORMATS.get(suffix)
    if by_suffix is None or by_suffix not in formats:
        names = ", ".join(s for s, f in _SUFFIX_FORMATS.items() if f in formats)
        raise OptionError(f"{option} {out}: cannot write a report as {suffix!r}; use {names}")
    if wanted is not None and wanted != by_suffix:
        note = f"{out.name} ends in {suffix}: writing {by_suffix}, not --format {wanted}"
        return OutputChoice(out, by_suffix, note)
    return OutputChoice(out, by_suffix)
