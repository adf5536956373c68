"""Ops that declare `exact_shape=True` (framework/registry.py): given the attributes the op's
public function passes (and inputs of the ranks it accepts), the shape rule raises on every
combination of input shapes that the kernel refuses, and otherwise gives the kernel's output
shapes. It may refuse more (an empty convolution output, which Keras refuses): a Keras
construction trace (graph/tracing.py's Tracer.stand_in) then runs the kernel, which decides.
Where the rule accepts, the trace trusts it and runs no kernel, so each claim is proven
here against the kernel on a grid of shapes, mismatched ones included, never asserted: an
op claiming it without cases here fails, and so does a grid in which the kernel refuses
nothing (for ops with more than one input)."""
import warnings

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import dispatch, registry
from tensorlite.framework.registry import Spec

F32 = tf.float32
# ranks 0-3, sizes 0-4, broadcastable and not
SHAPES = [(), (1,), (3,), (2,), (0,), (2, 3), (3, 1), (1, 3), (0, 3), (2, 1, 3), (4, 2, 3)]


class _Capture:
    """A dispatch observer keeping each op run: (op, input shapes and dtypes, attrs)."""

    def __init__(self):
        self.seen = []

    def record(self, op, inputs, attrs, outputs):
        self.seen.append((op, [(t._value.shape, t._dtype) for t in inputs], dict(attrs or {})))


def _last_op(fn):
    """(op, input shapes, input dtypes, attrs) of the last op `fn` runs: the attributes
    exactly as the public function makes them."""
    capture = _Capture()
    dispatch.OBSERVERS.append(capture)
    try:
        fn()
    finally:
        dispatch.OBSERVERS.remove(capture)
    op, ins, attrs = capture.seen[-1]
    return op, [s for s, _ in ins], [d for _, d in ins], attrs


def _zeros(*shape):
    return tf.zeros(shape)


def _matmul_shapes(shapes):
    a, b = shapes
    return [(a2, b2) for a2 in (a, a[:-1] + (5,), (2,) + a, (3,) + a, a[-2:])
            for b2 in (b, b[:-2] + (5, b[-1]), (2,) + b, (4,) + b, b[-2:])]


def _same_rank(shapes):
    """One input: itself, its last axis 1 or 0, and all ones (the attributes' rank kept)."""
    x, = shapes
    return [(x,), (x[:-1] + (1,),), (x[:-1] + (0,),), ((1,) * len(x),)]


def _conv_shapes(shapes):
    """An NHWC input and its filter: other depths, and sizes around the filter's."""
    x, w = shapes
    return [(x, w)] + [(x[:3] + (c,), w) for c in (1, 2, 5)] + \
        [(x[:1] + hw + x[3:], w) for hw in ((1, 1), (2, 2), (3, 3), (4, 4), (3, 7), (9, 9),
                                            (2, 5), (5, 2), (4, 1))]


def _einsum_shapes(shapes):
    a, b = shapes
    return [(a, b), (a[:-1] + (a[-1] + 1,), b), (a, b[:-1] + (b[-1] + 1,)), (a[1:], b),
            ((1,) + a[1:], b), (a, (1,) + b[1:])]


# op name -> [(public call whose last op gives the attributes, shapes -> shape grid)]
_ATTR_CASES = {
    "Conv2D": [(lambda: tf.nn.conv2d(_zeros(2, 6, 6, 3), _zeros(3, 3, 3, 4), 1, "VALID"),
                _conv_shapes),
               (lambda: tf.nn.conv2d(_zeros(2, 6, 6, 3), _zeros(3, 3, 3, 4), 2, "SAME"),
                _conv_shapes),
               (lambda: tf.nn.conv2d(_zeros(1, 7, 7, 2), _zeros(3, 3, 2, 4), 1, "VALID",
                                     dilations=2), _conv_shapes)],
    "DepthwiseConv2dNative": [
        (lambda: tf.nn.depthwise_conv2d(_zeros(2, 6, 6, 3), _zeros(3, 3, 3, 2), [1, 1, 1, 1],
                                        "VALID"), _conv_shapes),
        (lambda: tf.nn.depthwise_conv2d(_zeros(2, 6, 6, 3), _zeros(3, 3, 3, 1), [1, 2, 2, 1],
                                        "SAME"), _conv_shapes)],
    "Einsum": [(lambda: tf.einsum("abc,cde->abde", _zeros(2, 3, 4), _zeros(4, 5, 6)),
                _einsum_shapes),
               (lambda: tf.einsum("aecd,abcd->acbe", _zeros(2, 3, 4, 5), _zeros(2, 6, 4, 5)),
                _einsum_shapes),
               (lambda: tf.einsum("ij,jk", _zeros(2, 3), _zeros(3, 4)), _einsum_shapes),
               (lambda: tf.einsum("ii->i", _zeros(3, 3)),
                lambda s: [s, ((3, 4),), ((1, 3),), ((3, 1),)])],
    "BatchMatMulV2": [(lambda: tf.matmul(_zeros(2, 3, 4), _zeros(4, 5)), _matmul_shapes),
                      (lambda: tf.matmul(_zeros(3, 4), _zeros(5, 4), transpose_b=True),
                       _matmul_shapes),
                      (lambda: tf.matmul(_zeros(2, 4, 3), _zeros(2, 4, 5), transpose_a=True),
                       _matmul_shapes)],
    "Mean": [(lambda: tf.reduce_mean(_zeros(2, 3, 4), axis=[1, 2]), _same_rank),
             (lambda: tf.reduce_mean(_zeros(2, 3), axis=0, keepdims=True), _same_rank)],
    "Sum": [(lambda: tf.reduce_sum(_zeros(2, 3, 4), axis=-1, keepdims=True), _same_rank),
            (lambda: tf.reduce_sum(_zeros(2, 3)), _same_rank)],
    "Softmax": [(lambda: tf.nn.softmax(_zeros(2, 3, 4)), _same_rank),
                (lambda: tf.nn.softmax(_zeros(5)), _same_rank)],
}
_BINARY = ("AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference")
_UNARY = ("Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Tanh", "Sigmoid", "Relu", "Relu6")


def _grid(name):
    """[(input shapes, input dtypes, attrs)] for op `name`."""
    if name in _BINARY:
        return [((a, b), (F32, F32), {}) for a in SHAPES for b in SHAPES]
    if name in _UNARY:
        return [((a,), (F32,), {}) for a in SHAPES]
    cases = []
    for call, vary in _ATTR_CASES[name]:
        op, shapes, dtypes, attrs = _last_op(call)
        assert op.name == name, f"the call's last op is {op.name}, not {name}"
        cases += [(grid, dtypes, attrs) for grid in vary(shapes)]
    return cases


def _verdicts(op, shapes, dtypes, attrs):
    """(the rule's output shapes or its exception, the kernel's or its exception) on zeros."""
    try:
        got = op.infer(*[Spec(tuple(s), d) for s, d in zip(shapes, dtypes)], **attrs)
        rule = [tuple(g.shape) for g in (got if op.multi_output else [got])]
    except Exception as e:  # noqa: BLE001 - a refusal is the answer
        rule = e
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty axis
            out = op.forward(*[np.zeros(s, d.as_numpy_dtype) for s, d in zip(shapes, dtypes)],
                             **attrs)
        kernel = [tuple(np.shape(o)) for o in (out if op.multi_output else [out])]
    except Exception as e:  # noqa: BLE001
        kernel = e
    return rule, kernel


EXACT = sorted(name for name, op in registry.REGISTRY.items() if op.exact_shape)


def test_the_ops_a_construction_trace_meets_most_are_exact():
    # the elementwise, matmul, reduction and activation ops of MobileNetV2, ResNet50 and a
    # Transformer (bench/keras_construction.py)
    assert {"AddV2", "Mul", "Sub", "RealDiv", "Rsqrt", "Neg", "Relu", "Relu6", "Maximum",
            "Minimum", "Mean", "BatchMatMulV2", "Softmax", "SquaredDifference", "Conv2D",
            "DepthwiseConv2dNative", "Einsum"} <= set(EXACT)


@pytest.mark.parametrize("name", EXACT)
def test_exact_shape_rule_refuses_what_the_kernel_refuses(name):
    op = registry.get(name)
    assert name in _BINARY + _UNARY or name in _ATTR_CASES, \
        f"{name} declares exact_shape=True but has no cases in this test"
    grid, refused = _grid(name), 0
    for shapes, dtypes, attrs in grid:
        rule, kernel = _verdicts(op, shapes, dtypes, attrs)
        refused += isinstance(kernel, Exception)
        if not isinstance(rule, Exception):  # trusted: the kernel must agree
            assert rule == kernel, f"{name} on {shapes} {attrs}: rule {rule}, kernel {kernel!r}"
    if len(grid[0][0]) > 1:  # the grid must hold mismatches, or it proves nothing
        assert refused, f"no case of {name}'s grid is refused by its kernel"


def test_a_lax_rule_is_caught():
    # ConcatV2's rule does not compare the sizes off the concatenation axis: it does not
    # declare exact_shape, and this test's check would refuse it
    concat = registry.get("ConcatV2")
    assert not concat.exact_shape
    op, shapes, dtypes, attrs = _last_op(lambda: tf.concat([_zeros(2, 3), _zeros(2, 4)], 1))
    rule, kernel = _verdicts(op, [(2, 3), (3, 4)] + shapes[2:], dtypes, attrs)
    assert not isinstance(rule, Exception) and isinstance(kernel, Exception)


def test_a_construction_trace_runs_no_kernel_of_an_exact_op(monkeypatch):
    # the kernels of exact ops on values computed from the Inputs never run at
    # construction; a shape error is still raised there, naming the layer
    ran = []
    mul = registry.get("Mul")
    forward = mul.forward
    monkeypatch.setattr(mul, "forward", lambda *a, **k: ran.append(1) or forward(*a, **k))
    x = tf.keras.Input(shape=(None, 8))
    y = tf.keras.layers.Lambda(lambda t: t * t)(x)
    assert y.shape.as_list() == [None, None, 8] and not ran
    with pytest.raises(ValueError, match=r'layer "lambda_\d+" \(type Lambda\)(.|\n)*Mul'):
        tf.keras.layers.Lambda(lambda t: t * tf.ones((3,)))(x)
