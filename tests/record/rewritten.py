"""The text of a rewritten cell, with each site written out as its tuple: what a test
reads of `transformer.transform`'s tree, whose code reads its sites from a table."""

from __future__ import annotations

import ast
import re

from porter_ext.record.hooks_importlib_bootstrap import SITES, SITES_NAME
from porter_ext.record.transformer import transform

_SITE = re.compile(re.escape(SITES_NAME) + r"\[(\d+)\]")


def rewritten_text(source: str, cell: int | str, **options: bool) -> str:
    """``source`` rewritten for cell ``cell`` and unparsed, sites as tuples."""
    text = ast.unparse(transform(ast.parse(source), cell, **options))
    return _SITE.sub(lambda m: repr(tuple(SITES[int(m.group(1))])), text)
