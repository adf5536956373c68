"""The shared check for batching rules (as op_check.py is for gradients): for an op with a
`batch` rule, running the rule once on a batch equals running the op's forward on each
example and stacking, with every combination of batched and shared inputs."""
import inspect
import itertools
import warnings

import numpy as np

B = 3
_MATMUL_ATTRS = [{"transpose_a": ta, "transpose_b": tb} for ta in (False, True)
                 for tb in (False, True)]


def _arity(forward):
    nin = getattr(forward, "nin", None)
    if nin is not None:
        return nin
    params = inspect.signature(forward).parameters.values()
    return sum(1 for p in params if p.default is p.empty and
               p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _samples(rng, shape):
    yield rng.uniform(0.1, 0.9, size=shape).astype(np.float32)
    yield rng.integers(1, 5, size=shape).astype(np.int32)
    yield rng.integers(0, 2, size=shape).astype(bool)


def _programs():
    """Small programs (forward and backward) whose op calls give "leading" rules real
    inputs and attrs: convolutions, pooling, slicing, broadcasting, softmax."""
    import tensorlite as tf  # noqa: PLC0415
    rng = np.random.default_rng(3)
    x = tf.Variable(rng.normal(size=(2, 6, 6, 3)).astype(np.float32))
    k = tf.Variable(rng.normal(size=(3, 3, 3, 4)).astype(np.float32))
    dk = tf.Variable(rng.normal(size=(3, 3, 3, 2)).astype(np.float32))
    v = tf.Variable(rng.normal(size=(4, 5)).astype(np.float32))
    with tf.GradientTape() as tape:
        h = tf.nn.conv2d(x, k, 2, "SAME") + tf.nn.conv2d(x, k, 1, "VALID")[:, 1:, ::-1][:, :, 1:]
        h = tf.nn.max_pool2d(h, 2, 1, "SAME") + tf.nn.avg_pool2d(h, 3, 1, "SAME")
        h = tf.reduce_sum(h) + tf.reduce_sum(tf.nn.depthwise_conv2d(x, dk, [1, 1, 1, 1], "SAME"))
        s = tf.nn.softmax(v) + tf.nn.softmax(v, axis=0) + tf.nn.log_softmax(v)
        s = s[1:, ::2] + tf.broadcast_to(v[0, :3], [3, 3])
        loss = h + tf.reduce_sum(s * s)
    tape.gradient(loss, [x, k, dk, v])
    with tf.GradientTape() as outer:  # a gradient of a gradient: MaxPoolGradGrad
        with tf.GradientTape() as inner:
            h = tf.nn.max_pool2d(x, 2, 2, "VALID")
            inner_loss = tf.reduce_sum(h * h)
        gx = inner.gradient(inner_loss, x)
        outer_loss = tf.reduce_sum(gx * gx)
    outer.gradient(outer_loss, x)
    labels = tf.constant([1, 0, 3])
    with tf.GradientTape() as tape:
        logits = tf.concat([v[:2], v[2:]], axis=0)[:3] + tf.concat([v, v], axis=-1)[:3, 3:8]
        parts = tf.unstack(tf.stack([logits, 2.0 * logits], axis=-2), axis=1)
        picked = tf.where(logits > 0.0, parts[0], parts[1]) * tf.one_hot(labels, 5)
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits + picked)
        tf.one_hot(labels, 5, on_value=2.0, off_value=-1.0, axis=0)
        tf.zeros_like(v) + tf.ones_like(labels, dtype=tf.float32)[0]
        rows = tf.gather(v, [2, 0]) + tf.gather(v, [[1, 3]], axis=1)[0, :, :1]
        rows *= tf.cast(tf.size(v) + tf.shape(v)[0] + tf.rank(v), tf.float32)
        xent += tf.reduce_sum(rows)
    tape.gradient(xent, v)
    _fft_programs(tf, v)
    _layer_norm_programs(tf, v)
    _ctc_programs(tf)


def _ctc_programs(tf):
    """tf.nn.ctc_loss forward and backward (CTCLoss, and PreventGradient on its gradient)."""
    rng = np.random.default_rng(5)
    logits = tf.Variable(rng.normal(size=(6, 2, 4)).astype(np.float32))  # time-major
    with tf.GradientTape() as tape:
        loss = tf.nn.ctc_loss(labels=tf.constant([[1, 2], [3, 0]]), logits=logits,
                              label_length=tf.constant([2, 1]),
                              logit_length=tf.constant([6, 5]), blank_index=0)
        total = tf.reduce_sum(loss)
    tape.gradient(total, logits)


def _layer_norm_programs(tf, v):
    """LayerNormalization's training ops, forward and backward."""
    layer = tf.keras.layers.LayerNormalization()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.sin(layer(v, training=True)))
    tape.gradient(loss, [v] + layer.trainable_variables)


def _fft_programs(tf, v):
    """The FFT family forward and backward (their rules are "leading": they transform the
    innermost axes)."""
    z = tf.complex(v, v * 2.0)
    with tf.GradientTape() as tape:
        tape.watch([v, z])
        out = [tf.signal.fft(z), tf.signal.ifft(z), tf.signal.fft2d(z), tf.signal.ifft2d(z),
               tf.signal.fft3d(z[None]), tf.signal.ifft3d(z[None]), tf.signal.rfft(v, [6]),
               tf.signal.irfft(z, [7]), tf.signal.rfft2d(v), tf.signal.irfft2d(z),
               tf.signal.rfft3d(v[None]), tf.signal.irfft3d(z[None], [1, 4, 6])]
        total = tf.add_n([tf.reduce_sum(tf.abs(t)) for t in out])
    tape.gradient(total, [v, z])


def _recorded():
    """{op name: [(NumPy inputs, attrs)]} of the op calls `_programs` makes."""
    from tensorlite.framework import dispatch  # noqa: PLC0415

    class Recorder:
        found = {}

        def record(self, op, inputs, attrs, outputs):
            self.found.setdefault(op.name, []).append(
                ([np.asarray(t._value) for t in inputs], dict(attrs or {})))
    rec = Recorder()
    dispatch.OBSERVERS.append(rec)
    try:
        _programs()
    finally:
        dispatch.OBSERVERS.remove(rec)
    return rec.found


_RECORDED = []


def cases(op, rng):
    """[(example inputs, attrs)] for the op's rule kind; [] if the kind is unknown."""
    kind = getattr(op.batch, "kind", None)
    if kind == "leading":
        if not _RECORDED:
            _RECORDED.append(_recorded())
        return _RECORDED[0].get(op.name, [])[:3]
    if kind == "elementwise" and op.name == "BatchMatMulV2":
        return [([rng.normal(size=(2, 3)).astype(np.float32) if not a["transpose_a"] else
                  rng.normal(size=(3, 2)).astype(np.float32),
                  rng.normal(size=(3, 4)).astype(np.float32) if not a["transpose_b"] else
                  rng.normal(size=(4, 3)).astype(np.float32)], a) for a in _MATMUL_ATTRS]
    if kind == "elementwise":
        n = _arity(op.forward)
        shapes = [(2, 3), (3,)][:n] if n == 2 else [(2, 3)] * n
        for sample in zip(*[_samples(rng, s) for s in shapes]):
            try:
                with warnings.catch_warnings(), np.errstate(all="raise"):
                    warnings.simplefilter("error")
                    op.forward(*sample)
                return [(list(sample), {})]
            except Exception:  # noqa: BLE001 - this dtype is not the op's
                continue
        return []
    if kind == "reduction":
        out = []
        for sample in _samples(rng, (2, 3)):
            for axis, keep in (((1,), False), ((0,), True), (None, False)):
                try:
                    op.forward(sample, axis=axis, keepdims=keep)
                    out.append(([sample], {"axis": axis, "keepdims": keep}))
                except Exception:  # noqa: BLE001
                    pass
            if out:
                return out
        return []
    if kind == "reshape":
        return [([rng.normal(size=(2, 3)).astype(np.float32)], {"shape": (3, -1)})]
    if kind == "transpose":
        return [([rng.normal(size=(2, 3, 4)).astype(np.float32)], {"perm": (2, 0, 1)})]
    return []


def check_batch_rule(op, inputs, attrs, rng):
    """Asserts the rule equals the per-example loop for every batched/shared pattern."""
    for pattern in itertools.product([True, False], repeat=len(inputs)):
        if not any(pattern):
            continue
        batch = [np.stack([x + (rng.uniform(0, 0.05, x.shape).astype(x.dtype)
                                if x.dtype.kind == "f" else 0) for _ in range(B)])
                 if b else x for x, b in zip(inputs, pattern)]
        got = op.batch(batch, list(pattern), **attrs)
        per = [op.forward(*[a[i] if b else a for a, b in zip(batch, pattern)], **attrs)
               for i in range(B)]
        if not op.multi_output:
            got, per = [got], [[p] for p in per]
        assert len(got) == len(per[0]), f"{op.name}: {len(got)} outputs, not {len(per[0])}"
        for k, g in enumerate(got):  # a batch and one example may take different measured-
            # fastest convolution algorithms: float32 sums near 0 then differ by ~1e-6
            np.testing.assert_allclose(np.asarray(g), np.stack([p[k] for p in per]),
                                       rtol=1e-5, atol=5e-6, err_msg=f"{op.name} output {k} "
                                       f"batched={pattern} attrs={attrs}")
