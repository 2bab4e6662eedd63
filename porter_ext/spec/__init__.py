"""What the array API standard says: names and signatures per version, and the table of
non-standard spellings with their standard replacements."""

from porter_ext.spec.standard import (
    DEFAULT_VERSION,
    VERSIONS,
    FunctionSpec,
    Param,
    Standard,
    standard,
)

__all__ = ["DEFAULT_VERSION", "VERSIONS", "FunctionSpec", "Param", "Standard", "standard"]
