"""Settings of the whole suite.

``PORTER_DEBUG=1``: porter's own internal errors raise instead of becoming a porter
warning (see ``porter_ext.guard``), so that a bug in porter fails a test rather than
silently dropping a finding. Set before any test module imports porter.
"""

import os

os.environ["PORTER_DEBUG"] = "1"

import pytest  # noqa: E402


@pytest.fixture
def port_shell():
    """A real IPython shell with porter loaded, reset before and after the test."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    shell.run_line_magic("load_ext", "porter_ext")
    yield shell
    shell.run_line_magic("unload_ext", "porter_ext")
    shell.reset(new_session=False)


@pytest.fixture
def folder(tmp_path, monkeypatch, port_shell):
    """The person's folder (the kernel's working directory) with ``mymod.py`` in it
    (`tests.snippets.MYMOD`), importable; the module forgotten afterwards."""
    import sys

    from tests.snippets import MYMOD

    (tmp_path / "mymod.py").write_text(MYMOD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m == "mymod" or m.startswith("mymod.")]:
        del sys.modules[name]


@pytest.fixture
def person_folder():
    """A folder of the person's outside ``/tmp``: as root a worker's ``/tmp`` is a layer
    of its own over the person's (writes there stay the worker's), so the files whose
    writes a replay must be refused live elsewhere (``/var/tmp``, else the home)."""
    import shutil
    import tempfile

    where = "/var/tmp" if os.access("/var/tmp", os.W_OK) else os.path.expanduser("~")
    path = tempfile.mkdtemp(prefix="porter-test-person-", dir=where)
    from pathlib import Path

    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)
