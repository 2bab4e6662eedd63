"""The rewrites of usages that are no call of the table (`porter_ext.spec.indexing`): an
integer-array index into a first axis (``C[X]``) and ``len(x)``, verified on every
installed backend against the original on NumPy and torch, and written with the
person's expressions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from porter_ext.backends import get_backend
from porter_ext.spec.indexing import (
    EVERY_AXIS,
    INDEX_EXAMPLES,
    LENGTH,
    RANGE_PARTS,
    TAKE_ALONG,
    TAKE_FLAT,
    TAKE_LIST,
    TAKE_ROWS,
    ZIP_ROWS,
    length_rewrite,
    read_twice,
    take_rewrite,
    take_template,
    usage_from_source,
)
from tests.spec.test_replacement_rewrites import _agree, _available, _host

ORIGINALS = ("numpy", "torch")


def _arrays(backend, data, index):
    xp = backend.namespace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax without x64 narrows float64, and says so
        return xp, xp.asarray(data, dtype=xp.float64), xp.asarray(index, dtype=xp.int64)


@pytest.mark.parametrize("example", INDEX_EXAMPLES, ids=lambda e: f"index{np.ndim(e[1])}d")
def test_the_take_of_an_integer_array_index_agrees_with_it_on_every_backend(example):
    data, index = example
    template = take_template(np.ndim(index))
    rewritten = take_rewrite(template, "C", "X")
    originals = []
    for library in ORIGINALS:
        backend = get_backend(library)
        if backend.available()[0]:
            _, C, X = _arrays(backend, data, index)
            originals.append((library, _host(C[X])))
    assert originals, "numpy is always installed"
    for backend in _available():
        xp, C, X = _arrays(backend, data, index)
        value = _host(eval(rewritten, {"xp": xp, "C": C, "X": X}))
        for library, original in originals:
            _agree(original, value, f"{rewritten} on {backend.name} against {library}'s C[X]")


@pytest.mark.parametrize("index", [[2, 0, 2], [-1, 0], [1]], ids=str)
@pytest.mark.parametrize("data", [[[0.5, 1.0], [2.0, -3.0], [4.0, 5.5]], [0.5, 1.5, -2.0]])
def test_the_take_of_a_list_index_agrees_with_it_on_every_backend(data, index):
    """``x[[2, 0, 2]]``: NumPy and torch take the rows a list of ints names; the standard
    indexes with no list (array-api-strict raises), and its take reads an array."""
    rewritten = take_rewrite(TAKE_LIST, "C", "ix")
    originals = []
    for library in ORIGINALS:
        backend = get_backend(library)
        if backend.available()[0]:
            C = _arrays(backend, data, index)[1]
            originals.append((library, _host(C[index])))
    for backend in _available():
        xp, C, _ = _arrays(backend, data, index)
        value = _host(eval(rewritten, {"xp": xp, "C": C, "ix": index}))
        for library, original in originals:
            _agree(original, value, f"{rewritten} on {backend.name} against {library}'s C[ix]")
    assert usage_from_source(TAKE_LIST, "x[ind]") == "xp.take(x, xp.asarray(ind), axis=0)"


@pytest.mark.parametrize(
    "index", ["C[2, [2, 0, 1]]", "C[1:, [2, 0, 1]]", "C[:, 1:3, [0, -1]]", "C[::2, [1], 0]"]
)
def test_the_take_along_a_list_in_an_index_agrees_with_it_on_every_backend(index):
    """``X[1:, [2, 0, 1]]``: a list among integers and slices; the standard indexes with
    no list, and with an integer array only where every axis gets one."""
    data = np.arange(60.0).reshape(3, 4, 5)
    rewritten = usage_from_source(TAKE_ALONG, index)
    assert rewritten is not None and rewritten.startswith("xp.take(C[")
    originals = []
    for library in ORIGINALS:
        backend = get_backend(library)
        if backend.available()[0]:
            C = _arrays(backend, data.tolist(), [0])[1]
            originals.append((library, _host(eval(index, {"C": C}))))
    for backend in _available():
        xp, C, _ = _arrays(backend, data.tolist(), [0])
        value = _host(eval(rewritten, {"xp": xp, "C": C}))
        for library, original in originals:
            _agree(original, value, f"{rewritten} on {backend.name} against {library}'s {index}")
    # NumPy moves the list's axis first where a slice parts it from an integer
    assert usage_from_source(TAKE_ALONG, "C[0, :, [1, 2]]") is None
    assert usage_from_source(TAKE_ALONG, "C[[0, 1], [1, 2]]") is None


@pytest.mark.parametrize("data", [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [0.5, 1.5]])
def test_len_agrees_with_the_first_axis_on_every_backend(data):
    for backend in _available():
        xp = backend.namespace()
        x = xp.asarray(data)
        assert eval(length_rewrite("x"), {"x": x}) == len(np.asarray(data)), backend.name


def test_the_rewrites_write_the_persons_expressions():
    assert take_template(1) == TAKE_ROWS and take_template(2) == take_template(0) == TAKE_FLAT
    assert usage_from_source(TAKE_ROWS, "C[ix % 5]") == "xp.take(C, ix % 5, axis=0)"
    assert usage_from_source(TAKE_FLAT, "C[Xtr[ix]]") == (
        "xp.reshape(xp.take(C, xp.reshape(Xtr[ix], (-1,)), axis=0), (*Xtr[ix].shape, *C.shape[1:]))"
    )
    # an operand read again for its shape keeps its meaning: parenthesised
    assert "(*(a + b).shape, *m.T.shape[1:])" in usage_from_source(TAKE_FLAT, "m.T[a + b]")
    assert usage_from_source(LENGTH, "len(a + b)") == "(a + b).shape[0]"
    assert usage_from_source(LENGTH, "len(X)") == "X.shape[0]"
    # not these usages: a slice, a tuple index, len() of two arguments
    assert usage_from_source(TAKE_ROWS, "C[1:3]") is None
    assert usage_from_source(TAKE_ROWS, "C[X, 0]") is None
    assert usage_from_source(LENGTH, "len(a, b)") is None


def test_the_flat_form_refuses_an_operand_that_calls_something():
    assert read_twice(TAKE_FLAT, "C[torch.randint(0, 27, (4, 3))]") == (
        "torch.randint(0, 27, (4, 3))"
    )
    assert read_twice(TAKE_FLAT, "C[Xtr[ix]]") is None
    assert read_twice(TAKE_ROWS, "C[f(ix)]") is None  # read once
    # a creation from data of what calls nothing is the same array twice (makemore's
    # sampling loop); one whose data calls something is not
    assert read_twice(TAKE_FLAT, "C[torch.tensor([context])]") is None
    assert read_twice(TAKE_FLAT, "C[np.asarray(rows, dtype=np.int64)]") is None
    assert read_twice(TAKE_FLAT, "C[torch.tensor([f(context)])]") == "torch.tensor([f(context)])"
    assert read_twice(TAKE_FLAT, "C[torch.arange(6).reshape(2, 3)]") is not None


@pytest.mark.parametrize(
    "index", ["C[range(3), Y]", "C[range(1, 3), Y[1:]]", "C[range(0, 3, 2), 1]"]
)
def test_a_range_among_integer_arrays_as_arange_agrees_with_it_on_every_backend(index):
    """``logprobs[range(n), Yb]`` (makemore part 4): NumPy and torch take a range as an
    integer index; the standard takes integer arrays on every axis (2024.12), and
    ``xp.arange`` gives the range's integers as one."""
    data = np.arange(12.0).reshape(3, 4)
    rewritten = usage_from_source(RANGE_PARTS, index)
    assert (
        rewritten is not None
        and "xp.arange(" in rewritten
        and "range(" not in rewritten.replace("xp.arange(", "")
    )
    originals = []
    for library in ORIGINALS:
        backend = get_backend(library)
        if backend.available()[0]:
            _, C, Y = _arrays(backend, data.tolist(), [3, 0, 2])
            originals.append((library, _host(eval(index, {"C": C, "Y": Y}))))
    for backend in _available():
        xp, C, Y = _arrays(backend, data.tolist(), [3, 0, 2])
        value = _host(eval(rewritten, {"xp": xp, "C": C, "Y": Y}))
        for library, original in originals:
            _agree(original, value, f"{rewritten} on {backend.name} against {library}'s {index}")
    assert usage_from_source(RANGE_PARTS, "C[Y, 0]") is None
    assert usage_from_source(RANGE_PARTS, "C[range(n)]") is None


def test_zip_of_arrays_takes_the_rows_of_each_on_every_backend():
    """``for x, y in zip(X[:2], Y[:2])`` (makemore part 5): NumPy and torch iterate over
    rows; the standard's arrays are not iterable (array-api-strict raises for two axes),
    and ``xp.unstack`` gives the rows."""
    rewritten = usage_from_source(ZIP_ROWS, "zip(X[:2, ...], Y[:2])")
    assert rewritten == "zip(xp.unstack(X[:2, ...]), xp.unstack(Y[:2]))"
    data = np.arange(12.0).reshape(4, 3)
    originals = []
    for library in ORIGINALS:
        backend = get_backend(library)
        if backend.available()[0]:
            _, X, Y = _arrays(backend, data.tolist(), [3, 0, 2, 1])
            originals.append(
                (library, [(_host(x), _host(y)) for x, y in zip(X[:2], Y[:2], strict=True)])
            )
    for backend in _available():
        xp, X, Y = _arrays(backend, data.tolist(), [3, 0, 2, 1])
        pairs = list(eval(rewritten, {"xp": xp, "X": X, "Y": Y}))
        for library, original in originals:
            assert len(pairs) == len(original), backend.name
            for (x, y), (ox, oy) in zip(pairs, original, strict=True):
                _agree(ox, _host(x), f"{rewritten} on {backend.name} against {library}")
                _agree(oy, _host(y), f"{rewritten} on {backend.name} against {library}")
    assert usage_from_source(ZIP_ROWS, "zip(*rows)") is None
    assert usage_from_source(ZIP_ROWS, "zip(a, b, strict=True)") is None


def test_every_axis_keeps_an_operation_it_indexes_whole():
    """makemore part 4: ``F.softmax(logits, 1)[0]``, the softmax rewritten first into its
    formula, became ``xp.exp(...) / xp.sum(...)[0, ...]``: the index read off the sum
    (the replays refused it, "shape_changed"). The indexed value is one operand."""
    assert usage_from_source(EVERY_AXIS, "(a / b)[0]") == "(a / b)[0, ...]"
    assert usage_from_source(EVERY_AXIS, "x2[0]") == "x2[0, ...]"
    x2 = np.arange(6.0).reshape(2, 3)
    a, b = x2 + 1, x2 + 2
    np.testing.assert_array_equal(eval(usage_from_source(EVERY_AXIS, "(a / b)[0]")), (a / b)[0])
