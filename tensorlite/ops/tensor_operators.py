"""Installs Python operators on Tensor and Variable (as TensorFlow's math_ops does).

`a + b` is `tf.add(a, b)`, `a @ b` is `tf.matmul`, `a[i]` is a strided slice, `==` is
elementwise `tf.equal`; a Variable's operators read its value first.
"""
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.variables import Variable
from tensorlite.ops import math_ops as m
from tensorlite.ops.slice_ops import getitem
from tensorlite.ops.variable_slice import getitem as variable_getitem


_BINARY = {
    "add": m.add, "sub": m.subtract, "mul": m.multiply, "truediv": m.truediv,
    "floordiv": m.floordiv, "mod": m.floormod, "pow": m.pow, "matmul": m.matmul,
}
_LOGICAL = {"and": m.and_operator, "or": m.or_operator, "xor": m.xor_operator}
_COMPARE = {"lt": m.less, "le": m.less_equal, "gt": m.greater, "ge": m.greater_equal}


def _eq(self, other):
    try:
        return m.equal(self, other)
    except (TypeError, ValueError):
        return False


def _ne(self, other):
    try:
        return m.not_equal(self, other)
    except (TypeError, ValueError):
        return True


def _install(cls, read):
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", (lambda f: lambda s, o: f(read(s), o))(fn))
        setattr(cls, f"__r{name}__", (lambda f: lambda s, o: f(o, read(s)))(fn))
    for name, fn in _LOGICAL.items():
        setattr(cls, f"__{name}__", (lambda f: lambda s, o: f(read(s), o))(fn))
        setattr(cls, f"__r{name}__", (lambda f: lambda s, o: f(o, read(s)))(fn))
    for name, fn in _COMPARE.items():
        setattr(cls, f"__{name}__", (lambda f: lambda s, o: f(read(s), o))(fn))
    cls.__neg__ = lambda s: m.negative(read(s))
    cls.__pos__ = lambda s: read(s)
    cls.__abs__ = lambda s: m.abs(read(s))
    cls.__invert__ = lambda s: m.invert_operator(read(s))
    cls.__getitem__ = lambda s, key: getitem(read(s), key)
    cls.__eq__ = lambda s, o: _eq(read(s), o)
    cls.__ne__ = lambda s, o: _ne(read(s), o)


def install():
    # Tensor's hot operators are bound directly (one Python call fewer per `a + b`).
    _install(Tensor, lambda s: s)
    Tensor.__add__ = m.add
    Tensor.__sub__ = m.subtract
    Tensor.__mul__ = m.multiply
    Tensor.__matmul__ = m.matmul
    _install(Variable, lambda v: v._read())
    Variable.__getitem__ = variable_getitem  # an assignable slice (v[0, 0].assign(3.))


install()
