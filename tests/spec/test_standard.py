"""The standard as data: names and signatures per version, checked against array-api-strict."""

from __future__ import annotations

import json
import subprocess
import sys

import array_api_strict as xp
import pytest

from porter_ext.spec import _generate
from porter_ext.spec.standard import (
    DEFAULT_VERSION,
    VERSIONS,
    FunctionSpec,
    Param,
    Standard,
    since,
    standard,
)

STRICT_HELPERS = {
    "ArrayAPIStrictFlags",
    "Device",
    "__version__",
    "get_array_api_strict_flags",
    "reset_array_api_strict_flags",
    "set_array_api_strict_flags",
}


@pytest.fixture
def strict_flags():
    """Set array-api-strict's version flag for one test and put the old flags back."""
    old = xp.get_array_api_strict_flags()

    def at(version: str):
        xp.set_array_api_strict_flags(api_version=version)
        return xp

    yield at
    xp.set_array_api_strict_flags(**old)


def _strict_has(func) -> bool:
    """Whether array-api-strict offers ``func`` under the current flags: a function gated to a
    later version raises RuntimeError before it looks at its (here missing) arguments."""
    try:
        func()
    except RuntimeError as error:
        return "requires API version" not in str(error)
    except Exception:
        return True
    return True


def _strict_functions(namespace) -> dict[str, object]:
    """Every public function of array-api-strict's namespace, linalg and fft under the flags."""
    out = {n: getattr(namespace, n) for n in namespace.__all__}
    out = {n: f for n, f in out.items() if callable(f) and not isinstance(f, type)}
    for ext in ("linalg", "fft"):
        module = getattr(namespace, ext)
        for name, obj in vars(module).items():
            own = getattr(obj, "__module__", None) == module.__name__
            if own and callable(obj) and not isinstance(obj, type) and not name.startswith("_"):
                out[f"{ext}.{name}"] = obj
    return {n: f for n, f in out.items() if n not in STRICT_HELPERS and n not in ("linalg", "fft")}


@pytest.mark.parametrize("version", VERSIONS)
def test_each_version_loads(version):
    std = standard(version)
    assert isinstance(std, Standard)
    assert std.version == version
    assert standard(version) is std
    assert std.extensions == {"linalg", "fft"}
    assert std.constants == {"e", "inf", "nan", "newaxis", "pi"}
    assert {"bool", "int8", "uint64", "float32", "float64", "complex128"} <= std.dtypes
    assert len(std.dtypes) == 13
    assert std.array_attributes == {"dtype", "device", "mT", "ndim", "shape", "size", "T"}
    for method in ("__add__", "__iadd__", "__radd__", "__getitem__", "__setitem__", "to_device"):
        assert method in std.array_methods
    for method in ("__array_namespace__", "__dlpack__", "__dlpack_device__", "__bool__"):
        assert method in std.array_methods
    assert "__iter__" not in std.array_methods
    assert std.namespace_attributes == {"__array_api_version__"}


def test_default_version_and_unknown_version():
    assert DEFAULT_VERSION == "2025.12"  # the newest published version (issue 9)
    assert standard() is standard("2025.12")
    with pytest.raises(ValueError, match=r"2021\.12.*2022\.12, 2023\.12, 2024\.12, 2025\.12"):
        standard("2021.12")


def test_counts_are_plausible():
    std = standard("2024.12")
    linalg = [n for n in std.functions if n.startswith("linalg.")]
    fft = [n for n in std.functions if n.startswith("fft.")]
    assert len(linalg) == 23
    assert len(fft) == 14
    assert 160 <= len(std.functions) <= 200
    names = len(std.functions) + len(std.constants) + len(std.dtypes)
    assert names + len(std.array_methods) + len(std.array_attributes) >= 240
    counts = [len(standard(v).functions) for v in VERSIONS]
    assert counts == sorted(counts)  # nothing was removed from one version to the next


def test_names_in_2024_12():
    std = standard("2024.12")
    for name in ("sum", "max", "maximum", "concat", "permute_dims", "pow", "fft.fft"):
        assert std.is_function(name), name
    for name in ("linalg.vector_norm", "linalg.matrix_norm", "__array_namespace_info__"):
        assert std.is_function(name), name
    for name in ("linalg.norm", "norm", "concatenate", "transpose", "power", "linalg.eig"):
        assert not std.is_name(name), name
    assert std.is_name("pi") and std.is_name("float64") and std.is_name("fft.ifft")
    assert not std.is_function("pi")


def test_names_new_in_later_versions():
    for name in ("diff", "cumulative_prod", "count_nonzero", "take_along_axis", "nextafter"):
        assert standard("2024.12").is_function(name)
        assert not standard("2022.12").is_function(name)
        assert since(name) == "2024.12"
    assert since("maximum") == since("cumulative_sum") == "2023.12"
    assert since("sum") == "2022.12"
    assert since("isin") == since("linalg.eig") == since("broadcast_shapes") == "2025.12"
    assert since("linalg.norm") is None


def test_signature_of_sum():
    spec = standard().functions["sum"]
    assert spec.render() == "sum(x, /, *, axis=None, dtype=None, keepdims=False)"
    assert str(spec.signature()) == "(x, /, *, axis=None, dtype=None, keepdims=False)"
    assert spec.signature() is spec.signature()
    assert spec.params[0] == Param("x", "positional_only", False, None)
    assert spec.params[1] == Param("axis", "keyword_only", True, "None")


@pytest.mark.parametrize("version", VERSIONS)
def test_render_agrees_with_inspect(version):
    std = standard(version)
    for spec in (*std.functions.values(), *std.array_methods.values()):
        assert spec.render() == spec.name + str(spec.signature())


def test_check_call():
    functions = standard().functions
    reason = functions["max"].check_call(2, ())
    assert reason == "max() takes 1 positional argument (x) but 2 were given: axis is keyword-only"
    assert functions["max"].check_call(1, ("axis",)) is None
    assert functions["sum"].check_call(1, ("dim",)) == "sum() has no keyword 'dim'"
    assert functions["sum"].check_call(1, ("axis", "keepdims")) is None
    assert (
        functions["sum"].check_call(0, ("x",))
        == "sum() takes 'x' by position only, not as a keyword"
    )
    assert "missing required argument: axes" in functions["permute_dims"].check_call(1, ())
    assert functions["permute_dims"].check_call(2, ()) is None
    assert functions["permute_dims"].check_call(1, ("axes",)) is None
    assert "both by position and as a keyword" in functions["clip"].check_call(2, ("min",))
    assert "from 1 to 3 positional arguments" in functions["arange"].check_call(4, ())
    assert functions["meshgrid"].check_call(5, ("indexing",)) is None
    assert functions["meshgrid"].check_call(2, ("copy",)) == "meshgrid() has no keyword 'copy'"
    assert functions["linalg.vector_norm"].check_call(1, ("ord", "axis")) is None
    assert standard().array_methods["to_device"].check_call(2, ()) is not None


def test_check_call_handles_any_spec():
    spec = FunctionSpec(
        "f", (Param("a", "positional_only", False), Param("kw", "var_keyword", False))
    )
    assert spec.check_call(1, ("anything", "a")) is None
    assert spec.render() == "f(a, /, **kw)"
    assert "takes 1 positional argument (a) but 2 were given" in spec.check_call(2, ())


def test_signatures_that_changed_between_versions():
    def rendered(version, name, methods=False):
        std = standard(version)
        return (std.array_methods if methods else std.functions)[name].render()

    assert rendered("2022.12", "astype") == "astype(x, dtype, /, *, copy=True)"
    assert rendered("2023.12", "astype") == "astype(x, dtype, /, *, copy=True, device=None)"
    assert rendered("2022.12", "from_dlpack") == "from_dlpack(x, /)"
    assert rendered("2024.12", "from_dlpack") == "from_dlpack(x, /, *, device=None, copy=None)"
    assert rendered("2023.12", "fft.fftfreq") == "fft.fftfreq(n, /, *, d=1.0, device=None)"
    assert (
        rendered("2024.12", "fft.fftfreq") == "fft.fftfreq(n, /, *, d=1.0, dtype=None, device=None)"
    )
    assert rendered("2022.12", "__dlpack__", True) == "__dlpack__(*, stream=None)"
    assert rendered("2024.12", "__dlpack__", True) == (
        "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)"
    )
    for version in VERSIONS:
        assert rendered(version, "to_device", True) == "to_device(device, /, *, stream=None)"
        assert rendered(version, "expand_dims") == "expand_dims(x, /, axis)"
        assert rendered(version, "__array_namespace__", True) == (
            "__array_namespace__(*, api_version=None)"
        )


@pytest.mark.parametrize("version", VERSIONS)
def test_functions_match_array_api_strict(version, strict_flags):
    namespace = strict_flags(version)
    std = standard(version)
    strict = _strict_functions(namespace)
    for name in std.functions:
        assert name in strict, f"{name} is in the {version} data but not in array-api-strict"
        assert _strict_has(strict[name]), f"array-api-strict gates {name} past {version}"
    offered = {name for name, func in strict.items() if _strict_has(func)}
    assert offered == set(std.functions)


@pytest.mark.parametrize("version", VERSIONS)
def test_array_object_matches_array_api_strict(version, strict_flags):
    array = type(strict_flags(version).asarray(1))
    std = standard(version)
    for name in (*std.array_methods, *std.array_attributes):
        assert hasattr(array, name), name


@pytest.mark.parametrize("version", VERSIONS)
def test_array_api_strict_names_outside_the_standard(version):
    data = json.loads(_generate.dumps(_generate.build(version)))["array_api_strict"]
    assert set(data["names_not_in_standard"]) == STRICT_HELPERS
    assert set(data["array_members_not_in_standard"]) <= {"__array__", "__buffer__", "__iter__"}
    assert "to_device" in data["deviations"]


def test_generator_reproduces_committed_json(tmp_path):
    before = xp.get_array_api_strict_flags()
    written = _generate.generate(tmp_path)
    assert xp.get_array_api_strict_flags() == before
    assert [p.name for p in written] == [f"array_api_{v}.json" for v in VERSIONS]
    for path in written:
        committed = _generate.DATA_DIR / path.name
        assert path.read_bytes() == committed.read_bytes(), (
            f"{committed} is stale: run python -m porter_ext.spec._generate"
        )


def test_loading_imports_no_array_library():
    code = (
        "import sys; from porter_ext.spec.standard import standard; standard();"
        "heavy = {'torch', 'jax', 'array_api_strict', 'cupy'};"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
