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
