"""Attention layers: Attention (dot-product), AdditiveAttention, EinsumDense and
MultiHeadAttention.

MultiHeadAttention projects with EinsumDense sub-layers whose weights have Keras's shapes
and names: `multi_head_attention/query/kernel:0` [query_dim, num_heads, key_dim],
`.../query/bias:0` [num_heads, key_dim], likewise key and value, and
`.../attention_output/kernel:0` [num_heads, value_dim, output_dim].

Example:
    >>> mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    >>> out, scores = mha(tf.ones([1, 3, 8]), tf.ones([1, 5, 8]),
    ...                   return_attention_scores=True)
    >>> out.shape, scores.shape
    (TensorShape([1, 3, 8]), TensorShape([1, 2, 3, 5]))
"""
import math
import string

from tensorlite.ops import nn_ops as nn
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.name_scope import name_scope
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import activations
from tensorlite.keras.layers.base_layer_utils import (check_ndim, kernel_bias_config,
                                                      set_kernel_bias_args)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, linalg_ops, math_ops

_LARGE_NEGATIVE = 1e9  # Keras 2's masking constant for float32/float64 scores


def _masked_softmax(scores, mask, axes):
    """Softmax over the trailing `axes` axes; positions where mask is False get -1e9."""
    if mask is not None:
        mask = math_ops.cast(mask, scores.dtype)
        scores = math_ops.add(scores, math_ops.multiply(math_ops.subtract(1.0, mask),
                                                        -_LARGE_NEGATIVE))
    if axes == 1:
        return nn.softmax(scores, axis=-1)
    shape = scores.shape.as_list()
    flat = array_ops.reshape(scores, shape[:-axes] + [-1])
    return array_ops.reshape(nn.softmax(flat, axis=-1), shape)


def _causal_mask(q_len, v_len, dtype="bool"):
    ones = array_ops.ones((1, q_len, v_len))
    return math_ops.cast(linalg_ops.band_part(ones, -1, 0), dtype)


# -- Attention and AdditiveAttention ----------------------------------------------------------
class _DenseAttention(Layer):
    """Shared call of Attention and AdditiveAttention: inputs [query, value(, key)]."""

    def __init__(self, dropout=0.0, **kwargs):
        self.causal = bool(kwargs.pop("causal", False))  # Keras's deprecated argument
        super().__init__(**kwargs)
        self.dropout = float(dropout)
        self.supports_masking = True

    def _check_list(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{type(self).__name__} layer {self.name!r} must be called on a "
                             f"list of inputs, namely [query, value] or [query, value, key]. "
                             f"Received: {inputs!r}.")

    def _split(self, inputs):
        self._check_list(inputs)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) == 3 else v
        for i, t in enumerate((q, v, k)):
            check_ndim(self, t.shape, ndim=3, index=i)
        if k.shape[1] != v.shape[1]:
            raise ValueError(f"Layer {self.name!r}: key and value must have the same number of "
                             f"timesteps; received key shape {tuple(k.shape.as_list())} and "
                             f"value shape {tuple(v.shape.as_list())}")
        return q, v, k

    def build(self, input_shape):
        self._check_list(input_shape)
        self._build_scores(TensorShape(input_shape[0]).as_list()[-1])
        self.built = True

    def _build_scores(self, dim):
        pass

    def call(self, inputs, mask=None, training=None, return_attention_scores=False,
             use_causal_mask=False):
        q, v, k = self._split(inputs)
        q_mask, v_mask = (mask or [None, None])[:2] if isinstance(mask, (list, tuple)) else \
            (None, mask)
        scores = self._scores(q, k)
        scores_mask = None
        if v_mask is not None:
            scores_mask = array_ops.expand_dims(math_ops.cast(v_mask, "bool"), -2)
        if use_causal_mask or self.causal:
            causal = _causal_mask(scores.shape[-2], scores.shape[-1])
            scores_mask = causal if scores_mask is None else \
                math_ops.logical_and(scores_mask, causal)
        weights = _masked_softmax(scores, scores_mask, 1)
        dropped = nn.dropout(weights, self.dropout) if training and self.dropout > 0 \
            else weights
        result = math_ops.matmul(dropped, v)
        if q_mask is not None:
            result = math_ops.multiply(result, array_ops.expand_dims(
                math_ops.cast(q_mask, result.dtype), -1))
        return (result, weights) if return_attention_scores else result

    def compute_mask(self, inputs, mask=None):
        return None if mask is None or mask[0] is None else convert_to_tensor(mask[0])

    def compute_output_shape(self, input_shape):
        q, v = TensorShape(input_shape[0]).as_list(), TensorShape(input_shape[1]).as_list()
        return TensorShape(q[:-1] + v[-1:])

    def get_config(self):
        return {**super().get_config(), "dropout": self.dropout}


class Attention(_DenseAttention):
    """`tf.keras.layers.Attention`: Luong dot-product attention, softmax(q @ k^T) @ v;
    score_mode 'concat' scores sum(tanh(q + k)) instead."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode

    def _build_scores(self, dim):
        self.scale = self.add_weight("scale", (), initializer="ones") if self.use_scale \
            else None
        self.concat_score_weight = self.add_weight(
            "concat_score_weight", (), initializer="ones") if self.score_mode == "concat" \
            else None

    def _scores(self, q, k):
        if self.score_mode == "dot":
            if q.shape[-1] != k.shape[-1]:
                raise ValueError(f"Layer {self.name!r} (dot-product attention) needs query and "
                                 f"key with the same last dimension; received query shape "
                                 f"{tuple(q.shape.as_list())} and key shape "
                                 f"{tuple(k.shape.as_list())}")
            scores = math_ops.matmul(q, k, transpose_b=True)
            return scores if self.scale is None else math_ops.multiply(scores, self.scale)
        summed = math_ops.add(array_ops.expand_dims(q, -2), array_ops.expand_dims(k, -3))
        if self.scale is not None:
            summed = math_ops.multiply(summed, self.scale)
        return math_ops.multiply(self.concat_score_weight,
                                 math_ops.reduce_sum(math_ops.tanh(summed), axis=-1))

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale,
                "score_mode": self.score_mode}


class AdditiveAttention(_DenseAttention):
    """`tf.keras.layers.AdditiveAttention`: Bahdanau attention, scores
    sum(scale * tanh(q + k)) with a learned `scale` [dim]."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        self.use_scale = bool(use_scale)

    def _build_scores(self, dim):
        self.scale = self.add_weight("scale", (dim,), initializer="glorot_uniform") \
            if self.use_scale else None

    def _scores(self, q, k):
        if q.shape[-1] != k.shape[-1]:
            raise ValueError(f"Layer {self.name!r} needs query and key with the same last "
                             f"dimension; received query shape {tuple(q.shape.as_list())} and "
                             f"key shape {tuple(k.shape.as_list())}")
        t = math_ops.tanh(math_ops.add(array_ops.expand_dims(q, -2),
                                       array_ops.expand_dims(k, -3)))
        if self.scale is not None:
            t = math_ops.multiply(t, self.scale)
        return math_ops.reduce_sum(t, axis=-1)

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale}


# -- EinsumDense ------------------------------------------------------------------------------
def _parse_einsum_dense(layer, equation, input_shape, output_shape, bias_axes):
    """-> (equation without '...', kernel shape, bias shape or None, full output shape)."""
    eq = equation.replace(" ", "")
    try:
        lhs, out = eq.split("->")
        x_spec, k_spec = lhs.split(",")
    except ValueError:
        raise ValueError(f"Invalid einsum equation {equation!r} for layer {layer.name!r}: "
                         f"expected the form 'ab,bc->ac' (two operands, one output)") from None
    shape = list(input_shape)
    if "..." in x_spec:
        if not x_spec.startswith("...") or not out.startswith("..."):
            raise ValueError(f"Layer {layer.name!r}: only leading '...' is supported in "
                             f"EinsumDense equations, got {equation!r}")
        extra = len(shape) - (len(x_spec) - 3)
        fill = "".join(c for c in string.ascii_uppercase if c not in eq)[:extra]
        x_spec, out = fill + x_spec[3:], fill + out[3:]
        full_out = shape[:extra] + list(output_shape)
    else:
        if len(x_spec) != len(shape):
            raise ValueError(f"Layer {layer.name!r}: equation {equation!r} expects a rank-"
                             f"{len(x_spec)} input, got shape {tuple(shape)}")
        full_out = [shape[0]] + list(output_shape)
    if len(full_out) != len(out):
        raise ValueError(f"Layer {layer.name!r}: output_shape {tuple(output_shape)} does not "
                         f"fit the output spec {out!r} of {equation!r}")
    for i, c in enumerate(out):
        if c in x_spec:
            full_out[i] = shape[x_spec.index(c)]
    kernel = []
    for c in k_spec:
        if c in x_spec:
            kernel.append(shape[x_spec.index(c)])
        elif c in out:
            kernel.append(full_out[out.index(c)])
        else:
            raise ValueError(f"Weight dimension {c!r} did not have a match in either the input "
                             f"spec {x_spec!r} or the output spec {out!r} (layer "
                             f"{layer.name!r}).")
    bias = None
    if bias_axes:
        for c in bias_axes:
            if c not in out:
                raise ValueError(f"Bias dimension {c!r} was requested, but is not part of the "
                                 f"output spec {out!r} (layer {layer.name!r})")
        first = min(out.index(c) for c in bias_axes)
        bias = [full_out[i] if out[i] in bias_axes else 1 for i in range(first, len(out))]
    return f"{x_spec},{k_spec}->{out}", kernel, bias, full_out


class EinsumDense(Layer):
    """`tf.keras.layers.EinsumDense`: einsum(equation, inputs, kernel) + bias; e.g.
    EinsumDense("abc,cde->abde", (None, 4, 8), bias_axes="de")."""
    _casts_numeric_inputs = True

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else \
            tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        set_kernel_bias_args(self, kernel_initializer, kernel_regularizer, kernel_constraint,
                             bias_initializer, bias_regularizer, bias_constraint)

    def build(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        eq, kernel, bias, full = _parse_einsum_dense(self, self.equation, shape,
                                                     self.partial_output_shape, self.bias_axes)
        if None in kernel or (bias is not None and None in bias):
            raise ValueError(f"Layer {self.name!r}: the weight shape {kernel} depends on an "
                             f"undefined input dimension (input shape {tuple(shape)})")
        self._eq, self._full_output_shape, self._input_shape = eq, full, shape
        self.kernel = self.add_weight("kernel", kernel, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", bias, initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if bias is not None else None
        self.built = True

    def call(self, inputs):
        shape = inputs.shape.as_list()
        built = self._input_shape
        if len(shape) != len(built) or any(shape[i] != built[i]
                                           for i in self._weight_axes(len(shape))):
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: '
                             f"it was built for inputs of shape {tuple(built)}, but received "
                             f"input with shape {tuple(shape)}")
        out = math_ops.einsum(self._eq, inputs, self.kernel)
        if self.bias is not None:
            out = math_ops.add(out, self.bias)
        return self.activation(out)

    def _weight_axes(self, rank):
        """The input axes the kernel contracts (their sizes are fixed by the weights); the
        others (batch, a sequence's length) may differ from call to call, as in Keras: the
        NMT tutorial's decoder builds MultiHeadAttention on whole sentences and then
        generates one token at a time."""
        lhs, kernel = self._eq.split("->")[0].split(",")[:2]
        letters = lhs.replace("...", "")
        offset = rank - len(letters)
        return [offset + i for i, c in enumerate(letters) if c in kernel and
                self._input_shape[offset + i] is not None]

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        return TensorShape(_parse_einsum_dense(self, self.equation, shape,
                                               self.partial_output_shape, self.bias_axes)[3])

    def get_config(self):
        return {**super().get_config(), "output_shape": self.partial_output_shape,
                "equation": self.equation,
                "activation": activations.serialize(self.activation),
                "bias_axes": self.bias_axes,
                **kernel_bias_config(self)}


# -- MultiHeadAttention -----------------------------------------------------------------------
def _attention_equations(rank, attn_axes):
    """Einsum equations for projected tensors of `rank` ([batch, ..., heads, dim]):
    (key . query -> scores, scores . value -> combined), and the scores' rank."""
    letters = string.ascii_lowercase
    q = list(letters[:rank])
    k = list(q)
    for j, ax in enumerate(attn_axes):
        k[ax] = letters[rank + j]
    batch = [i for i in range(rank - 1) if i not in attn_axes]
    scores = [q[i] for i in batch] + [q[i] for i in attn_axes] + [k[i] for i in attn_axes]
    q, k, scores = "".join(q), "".join(k), "".join(scores)
    return f"{k},{q}->{scores}", f"{scores},{k}->{q}", len(scores)


class MultiHeadAttention(Layer):
    """`tf.keras.layers.MultiHeadAttention` (Vaswani et al.): per-head scaled dot-product
    attention of projected query/key/value, combined by an output projection."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        for arg, value in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"Invalid value for argument `{arg}` of layer {self.name!r}: "
                                 f"expected a positive integer, got {value!r}")
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim if value_dim is not None else key_dim
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self._output_shape = output_shape
        if attention_axes is not None and not isinstance(attention_axes, (list, tuple)):
            attention_axes = (attention_axes,)
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
        set_kernel_bias_args(self, kernel_initializer, kernel_regularizer, kernel_constraint,
                             bias_initializer, bias_regularizer, bias_constraint)
        self._signature = None  # (query, value, key) shapes once the projections exist

    # Keras's private names for the projections
    _query_dense = property(lambda self: self.query_dense)
    _key_dense = property(lambda self: self.key_dense)
    _value_dense = property(lambda self: self.value_dense)
    _output_dense = property(lambda self: self.output_dense)

    def build(self, input_shape):
        self.built = True  # the projections need value's shape too: made on the first call

    def _dense(self, name, equation, output_shape, bias_axes):
        return EinsumDense(equation, output_shape, bias_axes=bias_axes if self.use_bias else None,
                           kernel_initializer=self.kernel_initializer,
                           bias_initializer=self.bias_initializer,
                           kernel_regularizer=self.kernel_regularizer,
                           bias_regularizer=self.bias_regularizer,
                           kernel_constraint=self.kernel_constraint,
                           bias_constraint=self.bias_constraint, name=name, dtype=self._dtype_arg)

    def _build_from_signature(self, q_shape, v_shape, k_shape):
        rank = len(q_shape)
        letters = string.ascii_lowercase
        x, free = letters[:rank], letters[:rank - 1]
        hd = letters[rank:rank + 2]
        proj = f"{x},{x[-1]}{hd}->{free}{hd}"
        with name_scope(self._scope_name):
            self.query_dense = self._dense("query", proj, [None] * (rank - 2) +
                                           [self.num_heads, self.key_dim], hd)
            self.key_dense = self._dense("key", proj, [None] * (rank - 2) +
                                         [self.num_heads, self.key_dim], hd)
            self.value_dense = self._dense("value", proj, [None] * (rank - 2) +
                                           [self.num_heads, self.value_dim], hd)
            out_dims = self._output_dims(q_shape)
            o = letters[rank + 1:rank + 1 + len(out_dims)]
            xo = letters[:rank + 1]
            self.output_dense = self._dense(
                "attention_output", f"{xo},{xo[-2:]}{o}->{free}{o}",
                [None] * (rank - 2) + out_dims, o)
        axes = self.attention_axes if self.attention_axes is not None else \
            tuple(range(1, rank - 1))
        axes = tuple(sorted(a % (rank + 1) if a < 0 else a for a in axes))
        if any(a == 0 or a >= rank - 1 for a in axes):
            raise ValueError(f"Layer {self.name!r}: attention_axes {self.attention_axes} must "
                             f"name axes between the batch and the feature axis of a rank-"
                             f"{rank} query")
        self._axes = axes
        self._dot_eq, self._combine_eq, self._scores_rank = _attention_equations(rank + 1, axes)
        self._signature = (q_shape, v_shape, k_shape)

    def _output_dims(self, q_shape):
        if self._output_shape is None:
            return [q_shape[-1]]
        if isinstance(self._output_shape, int):
            return [self._output_shape]
        return list(self._output_shape)

    def _check(self, query, value, key):
        shapes = [t.shape.as_list() for t in (query, value, key)]
        ranks = {len(s) for s in shapes}
        if len(ranks) != 1 or min(ranks) < 3:
            raise ValueError(f"Layer {self.name!r}: query, value and key must have the same "
                             f"rank (at least 3: [batch, ..., features]); received query "
                             f"{tuple(shapes[0])}, value {tuple(shapes[1])}, key "
                             f"{tuple(shapes[2])}")
        if shapes[1][:-1] != shapes[2][:-1]:
            raise ValueError(f"Layer {self.name!r}: key and value must agree on every axis but "
                             f"the last; received value {tuple(shapes[1])} and key "
                             f"{tuple(shapes[2])}")
        if shapes[0][0] != shapes[1][0]:
            raise ValueError(f"Layer {self.name!r}: query and value have different batch "
                             f"sizes: {tuple(shapes[0])} and {tuple(shapes[1])}")
        if self._signature is not None:
            for name, got, built in zip(("query", "value", "key"), shapes, self._signature):
                if got[-1] != built[-1] or len(got) != len(built):
                    raise ValueError(f'Input "{name}" of layer "{self.name}" is incompatible '
                                     f"with the layer: it was built for a last dimension of "
                                     f"{built[-1]} (shape {tuple(built)}), but received "
                                     f"shape {tuple(got)}")
        return shapes

    def call(self, query, value, key=None, attention_mask=None, return_attention_scores=False,
             training=None, use_causal_mask=False):
        query, value = convert_to_tensor(query), convert_to_tensor(value)
        key = value if key is None else convert_to_tensor(key)
        shapes = self._check(query, value, key)
        if self._signature is None:
            self._build_from_signature(*shapes)
        q = math_ops.multiply(self.query_dense(query), 1.0 / math.sqrt(float(self.key_dim)))
        k, v = self.key_dense(key), self.value_dense(value)
        mask = self._attention_mask(query, value, attention_mask, use_causal_mask)
        scores = math_ops.einsum(self._dot_eq, k, q)
        scores = _masked_softmax(scores, mask, len(self._axes))
        dropped = nn.dropout(scores, self.dropout) if training and self.dropout > 0 \
            else scores
        out = self.output_dense(math_ops.einsum(self._combine_eq, dropped, v))
        return (out, scores) if return_attention_scores else out

    def _attention_mask(self, query, value, attention_mask, use_causal_mask):
        mask = None
        if attention_mask is not None:
            mask = math_ops.cast(convert_to_tensor(attention_mask), "bool")
        if use_causal_mask:
            if query.shape.rank != 3:
                raise ValueError(f"Layer {self.name!r}: use_causal_mask needs rank-3 "
                                 f"[batch, seq, features] inputs")
            causal = _causal_mask(query.shape[1], value.shape[1])
            mask = causal if mask is None else math_ops.logical_and(mask, causal)
        if mask is None:
            return None
        missing = self._scores_rank - mask.shape.rank
        if missing < 0:
            raise ValueError(f"Layer {self.name!r}: attention_mask of shape "
                             f"{tuple(mask.shape.as_list())} has more dimensions than the "
                             f"attention scores (rank {self._scores_rank})")
        at = mask.shape.rank - 2 * len(self._axes)  # the heads axis goes before the seq axes
        for _ in range(missing):
            mask = array_ops.expand_dims(mask, max(at, 0))
        return mask

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        q = TensorShape(query_shape).as_list()
        return TensorShape(q[:-1] + self._output_dims(q))

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout,
                "use_bias": self.use_bias, "output_shape": self._output_shape,
                "attention_axes": self.attention_axes,
                **kernel_bias_config(self)}
