"""Attention, AdditiveAttention, EinsumDense and MultiHeadAttention against NumPy
einsum references."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.layers.attention import (AdditiveAttention, Attention, EinsumDense,
                                               MultiHeadAttention)
from tests.op_check import check_op, rand
from tests.test_keras_layers import check_layer, random_weights, substituted

F64 = {"dtype": "float64"}
MHA_WEIGHTS = [f"{p}.{w}" for p in ("query_dense", "key_dense", "value_dense", "output_dense")
               for w in ("kernel", "bias")]


def np_softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_mha(q_in, v_in, k_in, ws, key_dim, mask=None):
    wq, bq, wk, bk, wv, bv, wo, bo = ws
    q = (np.einsum("btd,dhk->bthk", q_in, wq) + bq) / np.sqrt(key_dim)
    k = np.einsum("bsd,dhk->bshk", k_in, wk) + bk
    v = np.einsum("bsd,dhv->bshv", v_in, wv) + bv
    scores = np.einsum("bshk,bthk->bhts", k, q)
    if mask is not None:
        scores = scores + (1.0 - mask[:, None]) * -1e9
    probs = np_softmax(scores)
    out = np.einsum("bhts,bshv->bthv", probs, v)
    return np.einsum("bthv,hvo->bto", out, wo) + bo, probs


def _flat(outs):
    return tf.concat([tf.reshape(o, [-1]) for o in outs], axis=0)


def _mha_check(layer, q, v, k=None, order=1, ref_mask=None, **call_kwargs):
    """check_op over (query, value[, key], *weights), outputs and scores concatenated;
    the reference masks with `ref_mask`, or else the call's attention_mask."""
    layer(tf.constant(q), tf.constant(v), key=None if k is None else tf.constant(k))
    ws = random_weights(layer, MHA_WEIGHTS, scale=0.5)
    inputs = [q, v] + ([] if k is None else [k])
    n = len(inputs)
    mask = ref_mask if ref_mask is not None else call_kwargs.get("attention_mask")

    def fn(*args):
        with substituted(layer, MHA_WEIGHTS, args[n:]):
            key = args[2] if n == 3 else None
            return _flat(layer(args[0], args[1], key=key, return_attention_scores=True,
                               **call_kwargs))

    def ref(*args):
        key = args[2] if n == 3 else args[1]
        m = None if mask is None else np.asarray(mask, np.float64)
        out, probs = np_mha(args[0], args[1], key, args[n:], layer.key_dim, m)
        return np.concatenate([out.ravel(), probs.ravel()])
    check_op(fn, ref, inputs + ws, order=order)
    return ws


# -- MultiHeadAttention -----------------------------------------------------------------------
def test_mha_self_attention_matches_numpy():
    layer = MultiHeadAttention(num_heads=2, key_dim=3, **F64)
    x = rand(2, 4, 5)
    _mha_check(layer, x, x, order=2)
    assert [w.shape.as_list() for w in layer.weights] == [[5, 2, 3], [2, 3], [5, 2, 3], [2, 3],
                                                          [5, 2, 3], [2, 3], [2, 3, 5], [5]]
    assert [w.name for w in layer.weights][::2] == [
        f"{layer.name}/query/kernel:0", f"{layer.name}/key/kernel:0",
        f"{layer.name}/value/kernel:0", f"{layer.name}/attention_output/kernel:0"]


def test_mha_cross_attention_with_key_mask_and_value_dim():
    layer = MultiHeadAttention(num_heads=3, key_dim=2, value_dim=4, output_shape=6, **F64)
    q, v, k = rand(2, 3, 5), rand(2, 4, 7, seed=1), rand(2, 4, 3, seed=2)
    mask = rand(2, 3, 4, seed=3) > -1.0
    mask[0, :, 1] = False
    _mha_check(layer, q, v, k, attention_mask=tf.constant(mask))
    assert layer.value_dense.kernel.shape.as_list() == [7, 3, 4]
    assert layer.key_dense.kernel.shape.as_list() == [3, 3, 2]
    assert layer.output_dense.kernel.shape.as_list() == [3, 4, 6]
    _, scores = layer(tf.constant(q), tf.constant(v), key=tf.constant(k),
                      attention_mask=tf.constant(mask), return_attention_scores=True)
    assert scores.shape == (2, 3, 3, 4)
    np.testing.assert_allclose(scores.numpy()[0, :, :, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(scores.numpy().sum(-1), 1.0)


def test_mha_causal_mask():
    layer = MultiHeadAttention(num_heads=2, key_dim=2, **F64)
    x = rand(1, 4, 3)
    causal = np.tril(np.ones((1, 4, 4)))
    _mha_check(layer, x, x, ref_mask=causal, use_causal_mask=True)
    _, scores = layer(tf.constant(x), tf.constant(x), use_causal_mask=True,
                      return_attention_scores=True)
    np.testing.assert_allclose(scores.numpy() * (1 - causal[:, None]), 0.0, atol=1e-12)
    explicit = layer(tf.constant(x), tf.constant(x), attention_mask=tf.constant(causal > 0))
    np.testing.assert_allclose(layer(tf.constant(x), tf.constant(x), use_causal_mask=True)
                               .numpy(), explicit.numpy())
    # the future does not leak into the past
    x2 = x.copy()
    x2[:, 3] += 1.0
    a = layer(tf.constant(x), tf.constant(x), use_causal_mask=True).numpy()
    b = layer(tf.constant(x2), tf.constant(x2), use_causal_mask=True).numpy()
    np.testing.assert_allclose(a[:, :3], b[:, :3])


def test_mha_attention_axes_equal_flattened_sequence():
    """Attention over axes (1, 2) of [b, x, y, d] is attention over the flattened x*y."""
    grid = MultiHeadAttention(num_heads=2, key_dim=3, attention_axes=(1, 2), **F64)
    flat = MultiHeadAttention(num_heads=2, key_dim=3, **F64)
    x = rand(2, 2, 3, 4)
    out, scores = grid(tf.constant(x), tf.constant(x), return_attention_scores=True)
    assert out.shape == (2, 2, 3, 4) and scores.shape == (2, 2, 2, 3, 2, 3)
    xf = x.reshape(2, 6, 4)
    flat(tf.constant(xf), tf.constant(xf))
    flat.set_weights(grid.get_weights())
    want, want_scores = flat(tf.constant(xf), tf.constant(xf), return_attention_scores=True)
    np.testing.assert_allclose(out.numpy().reshape(2, 6, 4), want.numpy(), rtol=1e-10)
    np.testing.assert_allclose(scores.numpy().reshape(2, 2, 6, 6), want_scores.numpy(),
                               rtol=1e-10)
    fn = lambda v: grid(v, v)  # noqa: E731
    tf.test.check_grads(fn, [tf.constant(x)], order=1)


def test_mha_dropout_only_in_training():
    layer = MultiHeadAttention(num_heads=2, key_dim=2, dropout=0.5, **F64)
    x = tf.constant(rand(2, 5, 4))
    a = layer(x, x).numpy()
    np.testing.assert_array_equal(a, layer(x, x, training=False).numpy())
    assert not np.allclose(a, layer(x, x, training=True).numpy())


def test_mha_errors_name_the_layer():
    layer = MultiHeadAttention(num_heads=2, key_dim=2, name="mha_err")
    with pytest.raises(ValueError, match="mha_err.*same rank"):
        layer(tf.ones([2, 3, 4]), tf.ones([2, 4]))
    with pytest.raises(ValueError, match="mha_err.*key and value"):
        layer(tf.ones([2, 3, 4]), tf.ones([2, 5, 4]), key=tf.ones([2, 6, 4]))
    layer(tf.ones([2, 3, 4]), tf.ones([2, 5, 6]))
    with pytest.raises(ValueError, match='"query" of layer "mha_err".*last dimension of 4'):
        layer(tf.ones([2, 3, 5]), tf.ones([2, 5, 6]))
    with pytest.raises(ValueError, match='"value" of layer "mha_err".*last dimension of 6'):
        layer(tf.ones([2, 3, 4]), tf.ones([2, 5, 4]))
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadAttention(num_heads=0, key_dim=2)


# -- Attention and AdditiveAttention ----------------------------------------------------------
def np_dot_attention(q, v, k, scale=1.0, v_mask=None, q_mask=None, causal=False):
    scores = scale * q @ np.swapaxes(k, -1, -2)
    mask = np.ones(scores.shape, bool)
    if v_mask is not None:
        mask &= v_mask[:, None, :]
    if causal:
        mask &= np.tril(np.ones(scores.shape[-2:], bool))
    probs = np_softmax(scores - 1e9 * (~mask))
    out = probs @ v
    if q_mask is not None:
        out = out * q_mask[..., None]
    return out, probs


def test_attention_dot_with_scale_masks_and_scores():
    layer = Attention(use_scale=True, **F64)
    q, v, k = rand(2, 3, 4), rand(2, 5, 4, seed=1), rand(2, 5, 4, seed=2)
    v_mask = np.array([[True, True, False, True, False], [True] * 5])
    q_mask = np.array([[True, False, True], [True, True, True]])
    layer([tf.constant(q), tf.constant(v)])
    assert [w.name for w in layer.weights] == [f"{layer.name}/scale:0"]
    masks = [tf.constant(q_mask), tf.constant(v_mask)]

    def fn(q, v, k, scale):
        with substituted(layer, ["scale"], [scale]):
            return _flat(layer([q, v, k], mask=masks, return_attention_scores=True))

    def ref(q, v, k, scale):
        out, probs = np_dot_attention(q, v, k, scale, v_mask, q_mask)
        return np.concatenate([out.ravel(), probs.ravel()])
    check_op(fn, ref, [q, v, k, np.array(1.7)], order=2)


def test_attention_causal_and_concat_score_mode():
    q = rand(1, 4, 3)
    layer = Attention(**F64)
    ref = lambda q: np_dot_attention(q, q, q, causal=True)[0]  # noqa: E731
    check_op(lambda x: layer([x, x], use_causal_mask=True), ref, [q], order=2)
    concat = Attention(score_mode="concat", use_scale=True, **F64)
    concat([tf.constant(q), tf.constant(q)])

    def ref_concat(q, scale, w):
        scores = w * np.tanh(scale * (q[:, :, None, :] + q[:, None, :, :])).sum(-1)
        return np_softmax(scores) @ q
    fn = lambda q, s, w: _call_with(concat, ["scale", "concat_score_weight"], [s, w],  # noqa
                                    [q, q])
    check_op(fn, ref_concat, [q, np.array(0.8), np.array(1.3)], order=2)


def _call_with(layer, names, values, inputs, **kw):
    with substituted(layer, names, values):
        return layer(inputs, **kw)


def test_additive_attention_matches_numpy():
    layer = AdditiveAttention(**F64)
    q, v = rand(2, 3, 4), rand(2, 5, 4, seed=1)
    layer([tf.constant(q), tf.constant(v)])
    assert layer.scale.shape.as_list() == [4]

    def ref(q, v, scale):
        scores = (scale * np.tanh(q[:, :, None, :] + v[:, None, :, :])).sum(-1)
        return np_softmax(scores) @ v
    check_op(lambda q, v, s: _call_with(layer, ["scale"], [s], [q, v]), ref,
             [q, v, rand(4, seed=3)], order=2)


def test_attention_errors():
    layer = Attention(name="att_err")
    with pytest.raises(ValueError, match="att_err.*list of inputs"):
        layer(tf.ones([2, 3, 4]))
    assert not layer.built
    with pytest.raises(ValueError, match="att_dim.*same last dimension"):
        Attention(name="att_dim")([tf.ones([2, 3, 4]), tf.ones([2, 5, 3])])
    with pytest.raises(ValueError, match="att_err.*same number of timesteps"):
        layer([tf.ones([2, 3, 4]), tf.ones([2, 5, 4]), tf.ones([2, 6, 4])])
    with pytest.raises(ValueError, match="score_mode"):
        Attention(score_mode="additive")


# -- EinsumDense ------------------------------------------------------------------------------
@pytest.mark.parametrize("equation,out_shape,bias_axes,x,kernel,ref", [
    ("ab,bc->ac", 4, "c", rand(3, 5), [5, 4], lambda x, k, b: x @ k + b),
    ("abc,cd->abd", (None, 4), "d", rand(2, 3, 5), [5, 4], lambda x, k, b: x @ k + b),
    ("abc,cde->abde", (None, 2, 3), "de", rand(2, 3, 5), [5, 2, 3],
     lambda x, k, b: np.einsum("abc,cde->abde", x, k) + b),
    ("...b,bc->...c", 4, "c", rand(2, 3, 5), [5, 4], lambda x, k, b: x @ k + b),
    ("abc,cd->abd", (3, 4), "b", rand(2, 3, 5), [5, 4],
     lambda x, k, b: x @ k + b.reshape(3, 1)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_einsum_dense_matches_numpy(equation, out_shape, bias_axes, x, kernel, ref):
    layer = EinsumDense(equation, out_shape, bias_axes=bias_axes, **F64)
    check_layer(layer, ref, x, ["kernel", "bias"], order=2)
    assert layer.kernel.shape.as_list() == kernel
    assert layer.compute_output_shape(x.shape).as_list() == \
        list(ref(x, np.zeros(kernel), layer.bias.numpy()).shape)


def test_einsum_dense_errors():
    with pytest.raises(ValueError, match="Bias dimension 'z'"):
        EinsumDense("ab,bc->ac", 4, bias_axes="z")(tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Weight dimension 'q'"):
        EinsumDense("ab,bq->a", (), name="ed")(tf.ones([2, 3]))
    layer = EinsumDense("ab,bc->ac", 4, name="ed_built")
    layer(tf.ones([2, 3]))
    with pytest.raises(ValueError, match='"ed_built"'):
        layer(tf.ones([2, 5]))


def test_attention_built_on_sentences_then_called_one_token_at_a_time():
    """The NMT-with-attention tutorial builds its decoder's MultiHeadAttention on whole
    target sentences, then generates one token at a time (query length 1, batch 1): only
    the axes the kernels contract are fixed by the build, as in Keras; the result is the
    matching row of the full-length call."""
    mha = tf.keras.layers.MultiHeadAttention(key_dim=4, num_heads=2)
    rng = np.random.default_rng(0)
    q = rng.random((3, 8, 5)).astype(np.float32)
    v = rng.random((3, 6, 5)).astype(np.float32)
    full = mha(query=q, value=v).numpy()
    step = mha(query=q[:1, 2:3], value=v[:1]).numpy()
    np.testing.assert_allclose(step, full[:1, 2:3], rtol=1e-5, atol=1e-6)
    dense = tf.keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 7))
    assert dense(np.ones((2, 3, 4), np.float32)).shape == (2, 3, 7)
    assert dense(np.ones((1, 5, 4), np.float32)).shape == (1, 5, 7)
    with pytest.raises(ValueError, match="built for inputs of shape"):
        dense(np.ones((1, 5, 3), np.float32))  # the contracted axis is the kernel's
