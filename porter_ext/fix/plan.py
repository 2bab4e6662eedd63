"""The port plan moved to `porter_ext.model.plan` (issue 17)."""

# re-exported for session/fixing.py & co. until they move (issue 17)
from porter_ext.model.plan import build_plan

__all__ = ["build_plan"]
