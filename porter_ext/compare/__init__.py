"""Comparing a replay with the original run: numbers against the float64 reference (or
per-dtype tolerances), named kinds of difference, determinism, devices.

Importing this package imports NumPy but no other array library.
"""

from porter_ext.compare.devices import device_findings
from porter_ext.compare.model import (
    DIFFERENCE_KINDS,
    DeviceFinding,
    ErrorHistogram,
    OutputComparison,
)
from porter_ext.compare.numeric import NumericDiff, compare_values
from porter_ext.compare.outputs import Baseline, compare_outputs, expected_device
from porter_ext.compare.tolerance import (
    DEFAULT_POLICY,
    POLICIES,
    REFERENCE_RULE,
    ReferenceRule,
    Tolerance,
    TolerancePolicy,
    get_policy,
)

__all__ = [
    "DEFAULT_POLICY",
    "DIFFERENCE_KINDS",
    "POLICIES",
    "REFERENCE_RULE",
    "Baseline",
    "DeviceFinding",
    "ErrorHistogram",
    "NumericDiff",
    "OutputComparison",
    "ReferenceRule",
    "Tolerance",
    "TolerancePolicy",
    "compare_outputs",
    "compare_values",
    "device_findings",
    "expected_device",
    "get_policy",
]
