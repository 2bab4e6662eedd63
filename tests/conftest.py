"""Settings of the whole suite.

``PORTER_DEBUG=1``: porter's own internal errors raise instead of becoming a porter
warning (see ``porter_ext.guard``), so that a bug in porter fails a test rather than
silently dropping a finding. Set before any test module imports porter.
"""

import os

os.environ["PORTER_DEBUG"] = "1"
