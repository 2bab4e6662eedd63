"""``porter fix`` putting a verified rewrite in effect in its own run
(`porter_ext.fix.in_effect`): the person's classes keep their identity."""

from __future__ import annotations

import numpy as np

from porter_ext.fix.in_effect import put_in_effect
from porter_ext.record.recorder import install_hooks


def _namespace(source: str) -> dict:
    """A namespace as porter fix's kernel has it: the recorder's hooks bound, the cell run."""
    namespace: dict = {"__name__": "__main__"}
    install_hooks(namespace)
    exec(source, namespace)
    return namespace


ORIGINAL = """
import numpy as np

class Layer:
    def __call__(self, x):
        return self.forward(x)

class Tanh(Layer):
    def forward(self, x):
        self.out = np.tanh(x)
        return self.out

    def __call__(self, x):
        return super().__call__(x) * 1.0

layers = [Tanh()]
"""
#: the same cell with Tanh's body rewritten (``xp`` taken from the argument)
PORTED = ORIGINAL.replace(
    "        self.out = np.tanh(x)\n",
    "        xp = array_namespace(x)\n        self.out = xp.tanh(x)\n        self.ported = True\n",
).replace(
    "import numpy as np\n", "import numpy as np\nfrom array_api_compat import array_namespace\n"
)


def test_a_class_put_in_effect_keeps_the_persons_instances_its_own():
    """``layers`` was made by the original run: after the rewrite is in effect, a later
    ``isinstance(layer, Tanh)`` must hold (it turned false when the class statement
    ran again and bound a new class object), and the instances use the rewritten body."""
    namespace = _namespace(ORIGINAL)
    tanh, layer_class, layers = namespace["Tanh"], namespace["Layer"], namespace["layers"]
    put_in_effect(PORTED, namespace, 1)
    assert namespace["Tanh"] is tanh and namespace["Layer"] is layer_class
    assert all(isinstance(layer, namespace["Tanh"]) for layer in layers)
    x = np.linspace(-1.0, 1.0, 5)
    out = layers[0](x)  # super() inside the rewritten __call__ names the person's class
    np.testing.assert_allclose(out, np.tanh(x))
    assert layers[0].ported is True
    assert "array_namespace" in namespace


def test_a_class_of_another_kind_is_left_as_it_was():
    namespace = _namespace("class A:\n    def f(self):\n        return 1\n\na = A()")
    kept = namespace["A"]
    put_in_effect("class A(dict):\n    def f(self):\n        return 2\n", namespace, 1)
    assert namespace["A"] is kept and namespace["a"].f() == 1
