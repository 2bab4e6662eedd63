"""Helpers for the replay tests: a Python snippet in a fresh process with two JAX CPUs."""

from tests.snippets import ROOT, TWO_CPUS, run_two_cpus

__all__ = ["ROOT", "TWO_CPUS", "run_two_cpus"]
