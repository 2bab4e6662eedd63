"""`analyse`: inputs, outputs and in-place writes of many small cells."""

from __future__ import annotations

import pytest

from porter_ext.replay.analysis import analyse


@pytest.mark.parametrize(
    ("source", "inputs", "outputs"),
    [
        ("y = x + 1", ["x"], ["y"]),
        ("x = 1\ny = x + 1", [], ["x", "y"]),
        ("x += 1", ["x"], ["x"]),
        ("y = f(a, k=b)", ["f", "a", "b"], ["y"]),
        ("a, (b, *c) = t", ["t"], ["a", "b", "c"]),
        ("for i in range(n):\n    acc = acc + i", ["n", "acc"], ["i", "acc"]),
        ("with open(p) as fh:\n    t = fh.read()", ["p"], ["fh", "t"]),
        ("if (m := g(x)) > 0:\n    r = m", ["g", "x"], ["m", "r"]),
        ("del q", ["q"], []),
        ("z = 1\ndel z", [], []),
        ("ys = [v * s for v in xs if v > t]", ["xs", "s", "t"], ["ys"]),
        ("d = {k: w[k] for k in keys}", ["keys", "w"], ["d"]),
        ("g = (i for i in range(3) for j in rows[i])", ["rows"], ["g"]),
        ("total = sum(x)\nprint(total)", ["x"], ["total"]),
        ("if c:\n    y = 1\nprint(y)", ["c", "y"], ["y"]),
        ("if c:\n    y = 1\nelse:\n    y = 2\nprint(y)", ["c"], ["y"]),
        ("while n:\n    n = n - 1", ["n"], ["n"]),
        ("try:\n    v = a\nexcept E as e:\n    v = e\nprint(v)", ["a", "E"], ["v"]),
        ("x: int", [], []),
        ("x: int = y", ["y"], ["x"]),
        ("match p:\n    case [a, b]:\n        s = a + b + k", ["p", "k"], ["a", "b", "s"]),
        ("get_ipython().run_line_magic('time', 'z = f(x)')", ["get_ipython", "f", "x"], ["z"]),
        ("get_ipython().run_line_magic('timeit', '-n 3 -r 1 g(y)')", ["get_ipython", "g", "y"], []),
        # %timeit assigns in a namespace of its own: `c` stays the cell's input (02.07)
        (
            "get_ipython().run_line_magic('timeit', 'c, e = h(x)')\n"
            "get_ipython().run_line_magic('timeit', 'add(c, 1)')",
            ["get_ipython", "h", "x", "add", "c"],
            [],
        ),
    ],
)
def test_inputs_and_outputs(source: str, inputs: list[str], outputs: list[str]) -> None:
    io = analyse(source)
    assert list(io.inputs) == inputs
    assert list(io.outputs) == outputs


def test_imports_functions_and_classes_are_listed_apart() -> None:
    io = analyse(
        "import numpy as np\nimport os.path\nfrom math import pi as PI\n"
        "def f(b):\n    return b * w\n"
        "class C:\n    k = base\n    def m(self):\n        return glob\n"
        "z = f(a)\nc = C()\n"
    )
    assert io.imports == ("np", "os", "PI")
    assert io.definitions == ("f", "C")
    assert io.outputs == ("z", "c")
    # globals read inside functions and class bodies are inputs; the cell's own are not
    assert set(io.inputs) == {"w", "base", "glob", "a"}


def test_globals_read_in_functions_and_lambdas() -> None:
    assert analyse("def f(n):\n    return f(n - 1) + g(n)\n").inputs == ("g",)
    assert analyse("h = lambda v: v * scale").inputs == ("scale",)
    assert analyse("def outer():\n    def inner():\n        return q\n    return inner").inputs == (
        "q",
    )
    assert analyse("def f(a, b=dflt):\n    c = a\n    return c").inputs == ("dflt",)
    # a name bound before the function is defined is the cell's own
    assert analyse("xp = get()\ndef f(a):\n    return xp.sum(a)").inputs == ("get",)
    assert analyse("def f():\n    global g\n    g = 1\n    return g").inputs == ("g",)
    assert analyse("class K:\n    x = 1\n    def m(self):\n        return x").inputs == ("x",)


def test_builtins_are_not_inputs_but_are_listed() -> None:
    io = analyse("n = len(x)\nprint(n)\nsum = 3\ny = sum")
    assert io.inputs == ("x",)
    assert io.builtins == ("len", "print")


def test_last_expression_and_star_import() -> None:
    assert analyse("x").has_value
    assert analyse("y = 1\ny").has_value
    assert not analyse("y = 1").has_value
    assert not analyse("").has_value
    assert analyse("from numpy import *").star_import


def test_syntax_error_propagates() -> None:
    with pytest.raises(SyntaxError):
        analyse("x = (")


@pytest.mark.parametrize(
    ("source", "mutated"),
    [
        ("y = x + 1", []),
        ("x += 1", ["x"]),
        ("x[0] = 0", ["x"]),
        ("x[0] += 1", ["x"]),
        ("x.data = y", ["x"]),
        ("x.T[0] = 1", ["x"]),
        ("del x[0]", ["x"]),
        ("d['a'][0] = 1", ["d"]),
        ("np.add(a, b, out=c)", ["c"]),
        ("xp.multiply(a, b, out=(c, e))", ["c", "e"]),
        ("t.add_(1)", ["t"]),
        ("torch.nn.init.normal_(w)", ["torch", "w"]),
        ("x.fill(0)", ["x"]),
        ("x.sort()", ["x"]),
        ("y = xp.sort(x)", []),
        ("x.resize((3,))", ["x"]),
        ("np.copyto(dst, src)", ["dst"]),
        ("np.add.at(a, idx, 1)", ["a"]),
        ("lst.append(1)", ["lst"]),
        ("seen.add(k)", ["seen"]),
        ("y = xp.add(a, b)", []),
        # aliases: a view, the same object, a row of a loop
        ("y = x[1:]\ny[0] = 0", ["x"]),
        ("y = x\ny += 1", ["x"]),
        ("u = other.reshape(3)\nu += 1", ["other"]),
        ("y = xp.asarray(x)\ny[0] = 1", ["x", "xp"]),
        ("for row in m:\n    row[0] = 0", ["m"]),
        ("with ctx as v:\n    v.fill(0)", ["ctx"]),
        ("pair = (a, b)\npair[0][0] = 1", ["a", "b"]),
        ("holder[0] = arr\nholder[0][1] = 2", ["arr", "holder"]),
        ("c = [a]\ny = c[0]\ny[1] = 2", ["a"]),
        # writing into a container is not writing into what it holds
        ("lst = [x]\nlst.append(1)", []),
        ("buf[:, 0] = x", ["buf"]),
        ("out = xp.empty_like(x)\nout[0] = x[0]", []),
        ("for row in [r for r in m]:\n    row[0] = 0", ["m"]),
        ("[r.fill(0) for r in rows]", ["rows"]),
        # fresh results do not alias
        ("y = xp.sum(x)\ny[0] = 0", []),
        ("y = x + 1\ny[0] = 0", []),
        ("y = x.clone()\ny.add_(1)", []),
        # handed to a function of the cell: judged by what its body does
        ("def f(a):\n    return a * 2\nf(arr)", []),
        ("def f(a):\n    a[0] = 1\nf(arr)", ["arr"]),
        ("def f(a, *, out):\n    xp.exp(a, out=out)\nf(arr, out=buf)", ["arr", "buf"]),  # coarse
        ("def f(*arrays):\n    arrays[0][0] = 1\nf(arr)", ["arr"]),
        ("def f(a):\n    v = a.reshape(-1)\n    v += 1\nf(arr)", ["arr"]),
        ("def g(b):\n    b.fill(0)\ndef f(a):\n    return g(a)\nf(arr)", ["arr"]),
        ("def f(a):\n    def g():\n        a[0] = 1\n    g()\nf(arr)", ["arr"]),
        ("def f(a):\n    setattr(a, 'k', 1)\nf(obj)", ["obj"]),
        ("def f(n):\n    return f(n)\nf(arr)", []),
        ("def apply(fn, a):\n    return fn(a)\napply(g, arr)", ["arr", "g"]),
        ("f = lambda a: a\nf(arr)", ["arr"]),
        ("class C:\n    pass\nC(arr)", ["arr"]),
        ("def g():\n    gx[0] = 1\ng()", ["gx"]),
        ("def g():\n    v = gx\n    v += 1", ["gx"]),
        ("def g():\n    return [r.fill(0) for r in rows]", ["rows"]),
        ("def g(a):\n    a[0] = 1\n    return a\ny = 2", []),
        ("print(arr)", []),
    ],
)
def test_mutated(source: str, mutated: list[str]) -> None:
    assert sorted(analyse(source).mutated) == mutated


def test_functions_of_the_cell_win_over_the_person_functions_of_the_same_name() -> None:
    # re-running a cell: the person's namespace holds the previous run's `layer`
    io = analyse("def layer(a):\n    return a + 1\ny = layer(x)")
    assert io.mutated_given(["layer"]) == frozenset()
    io = analyse("def f(a):\n    return helper(a)\ny = f(x)")
    assert io.mutated == frozenset() and io.mutated_given(["helper"]) == {"x"}


def test_mutated_given_user_functions() -> None:
    io = analyse("v = x[1:]\nout = step(v, w=k)\nprint(z)")
    assert io.mutated == frozenset()
    # once `step` is known to be the person's own function, what it is handed may change
    assert io.mutated_given(["step"]) == {"x", "k"}
    assert io.mutated_given(["print"]) == {"z"}
    assert io.mutated_given(["unknown"]) == frozenset()
