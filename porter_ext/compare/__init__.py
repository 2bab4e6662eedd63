"""Comparing a replay with the original run: numbers against the float64 reference (or
per-dtype tolerances), named kinds of difference, determinism, devices.

Importing this package is cheap: its names import their modules (which import NumPy,
and no other array library) when first used.
"""

from porter_ext._lazy import lazy_names

_NAMES = {
    "device_findings": "devices",
    "DIFFERENCE_KINDS": "porter_ext.model.comparison",
    "DeviceFinding": "porter_ext.model.comparison",
    "ErrorHistogram": "porter_ext.model.comparison",
    "OutputComparison": "porter_ext.model.comparison",
    "Judging": "numeric",
    "NumericDiff": "numeric",
    "compare_values": "numeric",
    "Baseline": "outputs",
    "compare_outputs": "outputs",
    "expected_device": "outputs",
    "DEFAULT_POLICY": "tolerance",
    "POLICIES": "tolerance",
    "REFERENCE_RULE": "tolerance",
    "ReferenceRule": "tolerance",
    "Tolerance": "tolerance",
    "TolerancePolicy": "tolerance",
    "get_policy": "tolerance",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = [
    "DEFAULT_POLICY",
    "DIFFERENCE_KINDS",
    "POLICIES",
    "REFERENCE_RULE",
    "Baseline",
    "DeviceFinding",
    "ErrorHistogram",
    "Judging",
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
