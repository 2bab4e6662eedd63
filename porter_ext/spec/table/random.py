"""Random numbers: the standard has none, so every library's draws and seeds point to a
NumPy host generator whose draws move to the device.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NO_RANDOM_REWRITE, NO_SEED_REWRITE, Chapter

chapter = Chapter()

_RANDOM_NOTE = (
    "the standard has no random numbers: draw on the host with rng = "
    "np.random.default_rng(seed) and move them with xp.asarray(..., device=device)"
)
_SEED = "rng = np.random.default_rng(seed)"
_NORMAL = "xp.asarray(rng.standard_normal(shape), device=device)"
_UNIFORM = "xp.asarray(rng.random(shape), device=device)"
_NP_UNIFORM = "xp.asarray(rng.uniform(low, high, size), device=device)"
_JAX_UNIFORM = "xp.asarray(rng.uniform(minval, maxval, shape), device=device)"
_NP_NORMAL = "xp.asarray(rng.normal(loc, scale, size), device=device)"
_INTEGERS = "xp.asarray(rng.integers(low, high, shape), device=device)"
_PERMUTATION = "xp.asarray(rng.permutation(n), device=device)"
for _libs, _name, _suggestion in [
    ("nc", "random.rand", _UNIFORM),
    ("nc", "random.randn", _NORMAL),
    ("nc", "random.random", _UNIFORM),
    ("nc", "random.normal", _NP_NORMAL),
    ("j", "random.normal", _NORMAL),
    ("nc", "random.uniform", _NP_UNIFORM),
    ("j", "random.uniform", _JAX_UNIFORM),
    ("nc", "random.randint", _INTEGERS),
    ("nc", "random.seed", _SEED),
    ("ncj", "random.permutation", _PERMUTATION),
    ("ncj", "random.choice", "xp.asarray(rng.choice(a, size), device=device)"),
    ("j", "random.key", _SEED),
    ("j", "random.PRNGKey", _SEED),
    ("t", "rand", _UNIFORM),
    ("t", "randn", _NORMAL),
    ("t", "randint", _INTEGERS),
    ("t", "randperm", _PERMUTATION),
    ("t", "manual_seed", _SEED),
    ("t", "Generator", _SEED),
    ("t", "multinomial", "xp.asarray(rng.choice(n, size, p=probs), device=device)"),
    ("t", "normal", "xp.asarray(rng.normal(mean, std, size), device=device)"),
    ("t", "rand_like", "xp.asarray(rng.random(x.shape), dtype=x.dtype, device=x.device)"),
    ("t", "randn_like", "xp.asarray(rng.standard_normal(x.shape), dtype=x.dtype, device=x.device)"),
]:
    chapter.function(
        _libs,
        _name,
        None,
        _suggestion,
        _RANDOM_NOTE,
        no_rewrite=NO_SEED_REWRITE if _suggestion == _SEED else NO_RANDOM_REWRITE,
    )
# the generator the notes above advise: outside the standard's namespace, and the way to draw
chapter.add(
    "n",
    "function",
    "random.default_rng",
    "outside_namespace",
    None,
    # what to draw with it, not what it returns: a generator, no array (a static reading
    # of the cell takes a suggestion opening with xp.asarray( for an array's)
    "rng.random(shape), moved with xp.asarray(..., device=device)",
    "NumPy's host generator, as porter advises for random numbers: the standard has none, "
    "so draw on the host and move the draws with xp.asarray(..., device=device)",
    no_rewrite="nothing to rewrite: it is the portable way to draw random numbers",
)

ENTRIES = chapter.entries
