"""Merging layers: Concatenate, Add, Subtract, Multiply, Average, Maximum, Minimum, Dot,
and their functional forms (tf.keras.layers.add(...), ...).

Elementwise merges take inputs whose shapes broadcast (equal or 1 per axis); inputs of
lower rank get unit axes after the batch axis, as in Keras.

Example:
    >>> tf.keras.layers.Concatenate()([tf.ones([2, 3]), tf.zeros([2, 1])]).shape
    TensorShape([2, 4])
"""
import string

from tensorlite.ops import nn_ops as nn
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, math_ops


def _shapes(input_shape):
    return [TensorShape(s).as_list() for s in input_shape]


class _Merge(Layer):
    """Elementwise merge of a list of tensors by `_merge_function`."""

    _min_inputs = 1

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def _check_list(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"A merge layer ({type(self).__name__} {self.name!r}) should be "
                             f"called on a list of inputs. Received a single input of shape "
                             f"{tuple(TensorShape(getattr(inputs, 'shape', inputs)).as_list())}")
        if len(inputs) < self._min_inputs:
            raise ValueError(f"A merge layer ({type(self).__name__} {self.name!r}) should be "
                             f"called on a list of at least {self._min_inputs} input(s). Got "
                             f"{len(inputs)} inputs.")

    def _output_shape(self, shapes):
        batches = {s[0] for s in shapes if s and s[0] is not None}
        if len(batches) > 1:
            raise ValueError(f"Cannot merge tensors with different batch sizes in layer "
                             f"{self.name!r}. Got tensors with shapes {shapes}")
        out = list(shapes[0][1:])
        for s in shapes[1:]:
            a, b = out, list(s[1:])
            if len(a) < len(b):
                a, b = b, a
            merged = list(a[:len(a) - len(b)])
            for x, y in zip(a[len(a) - len(b):], b):
                if x is None or y is None:
                    merged.append(None if x in (None, 1) or y in (None, 1) else x)
                elif x == 1 or y == 1 or x == y:
                    merged.append(max(x, y) if 1 in (x, y) else x)
                else:
                    raise ValueError(f"Inputs have incompatible shapes. Received shapes "
                                     f"{tuple(shapes[0])} and {tuple(s)} (layer "
                                     f"{type(self).__name__} {self.name!r})")
            out = merged
        batch = next(iter(batches)) if batches else None
        return [batch] + out

    def build(self, input_shape):
        self._check_list(input_shape)
        self._output_shape(_shapes(input_shape))
        self.built = True

    def call(self, inputs):
        self._check_list(inputs)
        shapes = [t.shape.as_list() for t in inputs]
        self._output_shape(shapes)
        rank = max(len(s) for s in shapes)
        xs = []
        for x, s in zip(inputs, shapes):
            for _ in range(rank - len(s)):
                x = array_ops.expand_dims(x, 1)
            xs.append(x)
        return self._merge_function(xs)

    def compute_output_shape(self, input_shape):
        return TensorShape(self._output_shape(_shapes(input_shape)))

    def compute_mask(self, inputs, mask=None):
        if mask is None or all(m is None for m in mask):
            return None
        masks = [array_ops.expand_dims(m, 0) for m in mask if m is not None]
        return math_ops.reduce_all(array_ops.concat(masks, axis=0), axis=0)


def _fold(fn, xs):
    out = xs[0]
    for x in xs[1:]:
        out = fn(out, x)
    return out


class Add(_Merge):
    """`tf.keras.layers.Add`: the elementwise sum of the inputs."""

    def _merge_function(self, xs):
        return _fold(math_ops.add, xs)


class Subtract(_Merge):
    """`tf.keras.layers.Subtract`: inputs[0] - inputs[1] (exactly two inputs)."""

    def _check_list(self, inputs):
        super()._check_list(inputs)
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer ({self.name!r}) should be called on exactly "
                             f"2 inputs. Received {len(inputs)} inputs.")

    def _merge_function(self, xs):
        return math_ops.subtract(xs[0], xs[1])


class Multiply(_Merge):
    """`tf.keras.layers.Multiply`: the elementwise product of the inputs."""

    def _merge_function(self, xs):
        return _fold(math_ops.multiply, xs)


class Average(_Merge):
    """`tf.keras.layers.Average`: the elementwise mean of the inputs."""

    def _merge_function(self, xs):
        return math_ops.divide(_fold(math_ops.add, xs), float(len(xs)))


class Maximum(_Merge):
    """`tf.keras.layers.Maximum`: the elementwise maximum of the inputs."""

    def _merge_function(self, xs):
        return _fold(math_ops.maximum, xs)


class Minimum(_Merge):
    """`tf.keras.layers.Minimum`: the elementwise minimum of the inputs."""

    def _merge_function(self, xs):
        return _fold(math_ops.minimum, xs)


class Concatenate(_Merge):
    """`tf.keras.layers.Concatenate`: joins the inputs along `axis` (default the last);
    every other axis must match."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _output_shape(self, shapes):
        ranks = {len(s) for s in shapes}
        bad = len(ranks) != 1
        if not bad:
            rank = ranks.pop()
            if not -rank <= self.axis < rank:
                raise ValueError(f"Layer {self.name!r}: axis {self.axis} is out of range for "
                                 f"inputs of rank {rank}")
            axis = self.axis % rank
            for i in range(rank):
                known = {s[i] for s in shapes if s[i] is not None}
                if i != axis and len(known) > 1:
                    bad = True
        if bad:
            raise ValueError(f"A `Concatenate` layer ({self.name!r}) requires inputs with "
                             f"matching shapes except for the concatenation axis. Received: "
                             f"input_shape={[tuple(s) for s in shapes]}")
        out = [next((s[i] for s in shapes if s[i] is not None), None) for i in range(rank)]
        sizes = [s[axis] for s in shapes]
        out[axis] = None if None in sizes else sum(sizes)
        return out

    def call(self, inputs):
        self._check_list(inputs)
        self._output_shape([t.shape.as_list() for t in inputs])
        return array_ops.concat(list(inputs), axis=self.axis)

    def compute_mask(self, inputs, mask=None):
        """Sequence masks ([b, t] for [b, t, c] inputs): concatenated along the axis, or
        and-ed when the features (last axis) are concatenated."""
        if mask is None or all(m is None for m in mask):
            return None
        rank = inputs[0].shape.rank
        axis = self.axis % rank
        full = [array_ops.ones(x.shape.as_list()[:-1], "bool") if m is None else
                math_ops.cast(m, "bool") for x, m in zip(inputs, mask)]
        if full[0].shape.rank == rank:  # per-element masks, as Keras reduces them
            return math_ops.reduce_all(array_ops.concat(full, axis=axis), axis=-1)
        if axis == rank - 1:
            return math_ops.reduce_all(array_ops.stack(full, axis=0), axis=0)
        return array_ops.concat(full, axis=axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Dot(_Merge):
    """`tf.keras.layers.Dot`: per-example dot product of two tensors along `axes` (an int
    or a pair); normalize=True takes cosine similarities. [b, n] . [b, n] -> [b, 1]."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)) or len(axes) != 2 or \
                    not all(isinstance(a, int) for a in axes):
                raise ValueError(f"Invalid format for argument `axes`: expected an int or a "
                                 f"list/tuple of 2 ints. Received: axes={axes!r}")
            axes = tuple(axes)
        self.axes = axes
        self.normalize = bool(normalize)
        self.supports_masking = True

    def _axes_for(self, shapes):
        if len(shapes) != 2:
            raise ValueError(f"A `Dot` layer ({self.name!r}) should be called on a list of 2 "
                             f"inputs. Received: {len(shapes)} inputs.")
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else self.axes
        out = []
        for a, s in zip(axes, shapes):
            if len(s) < 2 or not -len(s) <= a < len(s) or a % len(s) == 0:
                raise ValueError(f"Layer {self.name!r}: axis {a} is not a non-batch axis of an "
                                 f"input of shape {tuple(s)}")
            out.append(a % len(s))
        s1, s2 = shapes
        if s1[out[0]] is not None and s2[out[1]] is not None and s1[out[0]] != s2[out[1]]:
            raise ValueError(f"Incompatible input shapes for layer {self.name!r}: axis values "
                             f"{s1[out[0]]} (at axis {out[0]}) != {s2[out[1]]} (at axis "
                             f"{out[1]}). Full input shapes: {tuple(s1)}, {tuple(s2)}")
        if s1[0] is not None and s2[0] is not None and s1[0] != s2[0]:
            raise ValueError(f"Layer {self.name!r}: inputs have different batch sizes: "
                             f"{tuple(s1)} and {tuple(s2)}")
        return out

    def _output_shape(self, shapes):
        a1, a2 = self._axes_for(shapes)
        s1, s2 = shapes
        out = [s1[0]] + [d for i, d in enumerate(s1) if i not in (0, a1)] + \
            [d for i, d in enumerate(s2) if i not in (0, a2)]
        return out if len(out) > 1 else out + [1]

    def call(self, inputs):
        self._check_list(inputs)
        shapes = [t.shape.as_list() for t in inputs]
        a1, a2 = self._axes_for(shapes)
        x, y = inputs
        if self.normalize:
            x, y = nn.l2_normalize(x, axis=a1), nn.l2_normalize(y, axis=a2)
        letters = iter(string.ascii_lowercase[2:])
        xs = ["a"] + [next(letters) for _ in shapes[0][1:]]
        ys = ["a"] + [next(letters) for _ in shapes[1][1:]]
        xs[a1] = ys[a2] = "b"
        out = ["a"] + [c for c in xs[1:] if c != "b"] + [c for c in ys[1:] if c != "b"]
        result = math_ops.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)
        return array_ops.expand_dims(result, 1) if len(out) == 1 else result

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def add(inputs, **kwargs):
    """`tf.keras.layers.add`: Add()(inputs)."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """`tf.keras.layers.subtract`: Subtract()(inputs)."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """`tf.keras.layers.multiply`: Multiply()(inputs)."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """`tf.keras.layers.average`: Average()(inputs)."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """`tf.keras.layers.maximum`: Maximum()(inputs)."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """`tf.keras.layers.minimum`: Minimum()(inputs)."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """`tf.keras.layers.concatenate`: Concatenate(axis)(inputs)."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    """`tf.keras.layers.dot`: Dot(axes, normalize)(inputs)."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
