"""Comparing a replay with the original run: numbers per dtype tolerance, devices.

Importing this package imports NumPy but no other array library.
"""

from porter_ext.compare.devices import device_findings
from porter_ext.compare.model import DeviceFinding, OutputComparison
from porter_ext.compare.numeric import NumericDiff, compare_values
from porter_ext.compare.outputs import compare_outputs, compare_outputs_detailed, expected_device
from porter_ext.compare.tolerance import (
    DEFAULT_POLICY,
    POLICIES,
    Tolerance,
    TolerancePolicy,
    get_policy,
)

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "DeviceFinding",
    "NumericDiff",
    "OutputComparison",
    "Tolerance",
    "TolerancePolicy",
    "compare_outputs",
    "compare_outputs_detailed",
    "compare_values",
    "device_findings",
    "expected_device",
    "get_policy",
]
