"""What the other stages ask the adapters instead of knowing a library themselves: device
objects, autograd state, global random states, host-only-ness, the calls that move data
or make arrays, and the library's own testing tolerances. Checked on the real libraries."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

from porter_ext.backends import (
    all_backends,
    generator_reduction,
    get_backend,
    is_device,
    names_device_type,
)

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
xps = pytest.importorskip("array_api_strict")
TORCH, NUMPY, JAX = get_backend("torch"), get_backend("numpy"), get_backend("jax")


def test_device_objects_are_recognised_by_their_library() -> None:
    cases = [
        (get_backend("torch"), torch.device("cpu")),
        (get_backend("jax"), jax.devices()[0]),
        (get_backend("strict"), xps.Device("CPU_DEVICE")),
    ]
    for backend, device in cases:
        assert backend.is_device(device) and is_device(device), device
    assert not NUMPY.is_device(torch.device("cpu"))
    for thing in (np.dtype("float32"), torch.float32, object(), len):
        assert not is_device(thing), thing


def test_a_device_object_names_its_type() -> None:
    assert TORCH.device_type(torch.device("cuda:1")) == "cuda"  # no GPU needed to spell it
    assert names_device_type(torch.device("cuda"), "cuda")
    assert not names_device_type(torch.device("cpu"), "cuda")
    assert JAX.device_type(jax.devices("cpu")[0]) == "cpu"
    assert not names_device_type(jax.devices("cpu")[0], "cuda")
    assert not names_device_type(xps.Device("CPU_DEVICE"), "cuda")


def test_torch_autograd_state_is_read_and_rebuilt() -> None:
    w = torch.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    assert TORCH.autograd_node(w) is None and TORCH.tracks_gradient(w)
    assert torch.equal(TORCH.gradient(w), torch.full((3,), 2.0))
    assert TORCH.autograd_node(w * 2) == "MulBackward0"
    assert not TORCH.tracks_gradient(torch.ones(2)) and TORCH.gradient(torch.ones(2)) is None

    grad = torch.full((3,), 2.0)
    p = TORCH.with_autograd(torch.ones(3), tracks=True, gradient=grad, kind=torch.nn.Parameter)
    assert type(p) is torch.nn.Parameter and p.requires_grad and p.grad is grad
    plain = TORCH.with_autograd(torch.ones(3), tracks=True, gradient=grad)
    assert type(plain) is torch.Tensor and plain.requires_grad and plain.grad is grad
    frozen = TORCH.with_autograd(torch.ones(3), tracks=False, kind=torch.nn.Parameter)
    assert type(frozen) is torch.nn.Parameter and not frozen.requires_grad


def test_a_tensor_of_a_graph_is_rebuilt_as_made_by_an_operation() -> None:
    """What a worker makes of a tensor whose graph stayed behind: it records gradients and
    is no leaf (in-place updates allowed, as on the original); its retained gradient is
    kept; a backward pass that reaches it is noted, once."""
    TORCH.cut_graphs_reached()
    grad = torch.full((3,), 4.0)
    x = TORCH.with_autograd(torch.ones(3), tracks=True, gradient=grad, graph="MulBackward0")
    assert x.requires_grad and not x.is_leaf and x.grad_fn is not None
    assert torch.equal(x.grad, grad) and x.retains_grad
    x[0] = 5.0  # allowed on a non-leaf, refused on a leaf that records gradients
    assert TORCH.cut_graphs_reached() == []
    (x * 2).sum().backward()
    assert TORCH.cut_graphs_reached() == ["MulBackward0"]
    assert TORCH.cut_graphs_reached() == []
    assert TORCH.gradient(torch.ones(2, requires_grad=True) * 2) is None  # and no warning


def test_libraries_without_autograd_keep_the_defaults() -> None:
    for backend, x in ((NUMPY, np.ones(3)), (JAX, jax.numpy.ones(3))):
        assert backend.autograd_node(x) is None and not backend.tracks_gradient(x)
        assert backend.gradient(x) is None
        assert backend.with_autograd(x, tracks=True, gradient=x) is x


def test_array_subclasses_are_named_for_the_receiver() -> None:
    assert TORCH.array_subclass(torch.nn.Parameter(torch.ones(2))) is torch.nn.Parameter
    assert TORCH.array_subclass(torch.ones(2)) is None
    assert NUMPY.array_subclass(np.ones((2, 2)).view(np.matrix)) is np.matrix
    assert NUMPY.array_subclass(np.ones(2)) is None
    assert JAX.array_subclass(jax.numpy.ones(2)) is None  # ArrayImpl lives in jaxlib


@pytest.mark.parametrize(
    ("library", "draw"),
    [("numpy", lambda: np.random.rand(4)), ("torch", lambda: torch.rand(4).numpy())],
)
def test_a_global_random_state_is_taken_and_set_back(library: str, draw) -> None:
    backend = get_backend(library)
    state = pickle.loads(pickle.dumps(backend.random_state()))  # it travels to workers
    first = draw()
    backend.set_random_state(state)
    assert np.array_equal(draw(), first)


def test_libraries_without_a_global_generator_have_no_state() -> None:
    assert JAX.random_state() is None and get_backend("strict").random_state() is None


def test_a_torch_generator_travels_as_its_state() -> None:
    generator = torch.Generator().manual_seed(7)
    rebuild, args = generator_reduction(generator)
    copy = rebuild(*pickle.loads(pickle.dumps(args)))
    assert torch.equal(torch.rand(3, generator=copy), torch.rand(3, generator=generator))
    assert generator_reduction(np.random.default_rng(0)) is None  # it pickles as it is
    assert generator_reduction([1, 2]) is None


def test_only_numpy_and_strict_are_host_only() -> None:
    assert [b.name for b in all_backends() if b.host_only] == ["numpy", "strict"]


def test_moving_and_creation_calls_exist_in_their_library() -> None:
    places = {
        "numpy": (np, np.random, np.ones(2)),
        "torch": (torch, torch.ones(2)),
        "jax": (jax, jax.numpy, jax.random, jax.numpy.ones(2)),
    }
    for library, where in places.items():
        backend = get_backend(library)
        names = backend.moving_calls | backend.creation_calls
        assert backend.creation_from_array <= backend.creation_calls
        missing = [n for n in names if not any(hasattr(w, n) for w in where)]
        assert not missing, (library, missing)


def test_testing_tolerances_are_the_libraries_own_defaults() -> None:
    from torch.testing._comparison import _DTYPE_PRECISIONS

    for key, row in TORCH.testing_tolerances.items():
        assert _DTYPE_PRECISIONS[getattr(torch, key)] == row, key
    defaults = inspect.signature(np.allclose).parameters
    expected = (defaults["rtol"].default, defaults["atol"].default)
    assert set(NUMPY.testing_tolerances.values()) == {expected}
    assert not JAX.testing_tolerances
