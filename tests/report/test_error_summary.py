"""Error summaries: right counts, bounded size whatever the array size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from porter_ext.report import OutputEntry, Report, render_html, summarize_error, validate
from porter_ext.report.error_summary import error_histogram, error_map, with_error_summary
from tests.report.conftest import make_cell, make_environment, make_output, make_replay


def test_histogram_counts_every_element_once() -> None:
    err = np.array([0.0, 0.0, 1e-9, 1e-6, 1e-3, 1.0, np.nan, np.inf])
    hist = error_histogram(err)
    assert len(hist.edges) == len(hist.counts) + 1
    assert hist.edges[0] == 0.0
    assert sum(hist.counts) == 6
    assert hist.nonfinite == 2
    assert hist.counts[0] == 2  # exact matches fall in the first bin
    assert hist.edges[-1] >= 1.0


def test_histogram_of_identical_arrays() -> None:
    hist, emap = summarize_error(np.ones(5), np.ones(5))
    assert hist.counts == [5] and hist.nonfinite == 0
    assert emap is None  # 1-D: no map


def test_nan_in_both_is_a_match() -> None:
    a = np.array([[np.nan, 1.0], [2.0, 3.0]])
    b = np.array([[np.nan, 1.0], [2.0, 4.0]])
    hist, emap = summarize_error(a, b)
    assert hist.nonfinite == 0
    assert emap == [[0.0, 0.0], [0.0, 1.0]]


def test_error_map_is_a_blockwise_maximum() -> None:
    err = np.zeros((128, 130))
    err[5, 7] = 2.0
    err[127, 129] = np.inf
    emap = error_map(err)
    assert len(emap) == 64 and all(len(row) == 64 for row in emap)
    assert emap[2][2] == 2.0  # rows split 2 by 2; columns 3,3,2,2,...: column 7 is in block 2
    assert emap[63][63] is None  # non-finite block
    assert sum(v for row in emap for v in row if v) == 2.0
    assert error_map(np.zeros((3, 4, 5)))[0] == [0.0] * 5  # leading axes folded in


def test_shapes_must_match() -> None:
    with pytest.raises(ValueError, match="shapes"):
        summarize_error(np.ones(3), np.ones(4))


def test_bool_int_and_complex_outputs() -> None:
    hist, _ = summarize_error(np.array([True, False]), np.array([True, True]))
    assert sum(hist.counts) == 2
    hist, _ = summarize_error(np.array([1, 2]), np.array([1, 5]))
    assert hist.edges[-1] >= 3
    hist, _ = summarize_error(np.array([1j, 2]), np.array([1j, 2 + 1j]))
    assert sum(hist.counts) == 2


def test_a_million_element_mismatch_stays_small() -> None:
    rng = np.random.default_rng(0)
    expected = rng.standard_normal((1000, 1000))
    actual = expected + rng.standard_normal((1000, 1000)) * 1e-3
    actual[::97, ::89] = np.nan
    comparison = make_output("big", mismatch=True, shape=[1000, 1000], mismatched=10**6)
    entry = with_error_summary(comparison, expected, actual)
    assert isinstance(entry, OutputEntry)
    assert sum(entry.error_histogram.counts) + entry.error_histogram.nonfinite == 10**6
    cell = make_cell(0, replays=[make_replay("numpy", outputs=[entry])])
    report = Report.build([cell], make_environment(), array_api_version="2024.12")
    text = report.to_json()
    validate(json.loads(text))
    assert len(text) < 100_000
    html = render_html(report)
    assert len(html.encode()) < 300_000
    assert html.count("data:image/png;base64,") == 1
