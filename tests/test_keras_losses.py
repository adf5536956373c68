"""tf.keras.losses: each loss against NumPy, its gradients by finite differences, the
reductions and sample weights, Keras's shape rules, errors, get/serialize."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras import losses
from tests.op_check import check_op, positive, rand

EPS = 1e-7


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def onehot(labels, n):
    return np.eye(n)[labels]


# -- NumPy references -------------------------------------------------------------------------
def np_cce(y, p, from_logits=False, ls=0.0, axis=-1):
    if ls:
        y = y * (1 - ls) + ls / y.shape[axis]
    if from_logits:
        p = softmax(p, axis)
    else:
        p = p / p.sum(axis=axis, keepdims=True)
    p = np.clip(p, EPS, 1 - EPS) if not from_logits else p
    return -(y * np.log(p)).sum(axis=axis)


def np_scce(labels, p, from_logits=False):
    logp = np.log(softmax(p)) if from_logits else np.log(softmax(np.log(np.clip(p, EPS, 1 - EPS))))
    return -np.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]


def np_bce(y, p, from_logits=False, ls=0.0):
    if ls:
        y = y * (1 - ls) + 0.5 * ls
    if from_logits:
        return (np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))).mean(-1)
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p + EPS) + (1 - y) * np.log(1 - p + EPS)).mean(-1)


def np_huber(y, p, delta=1.0):
    e = p - y
    a = np.abs(e)
    return np.where(a <= delta, 0.5 * e * e, delta * a - 0.5 * delta * delta).mean(-1)


REFS = {
    "mse": lambda y, p: ((p - y) ** 2).mean(-1),
    "mae": lambda y, p: np.abs(p - y).mean(-1),
    "mape": lambda y, p: 100 * np.abs((y - p) / np.maximum(np.abs(y), EPS)).mean(-1),
    "msle": lambda y, p: ((np.log(np.maximum(p, EPS) + 1)
                           - np.log(np.maximum(y, EPS) + 1)) ** 2).mean(-1),
    "kld": lambda y, p: (np.clip(y, EPS, 1) * np.log(np.clip(y, EPS, 1)
                                                     / np.clip(p, EPS, 1))).sum(-1),
    "poisson": lambda y, p: (p - y * np.log(p + EPS)).mean(-1),
    "log_cosh": lambda y, p: np.log(np.cosh(p - y)).mean(-1),
    "cosine_similarity": lambda y, p: -((y / np.linalg.norm(y, axis=-1, keepdims=True))
                                        * (p / np.linalg.norm(p, axis=-1, keepdims=True))
                                        ).sum(-1),
    "hinge": lambda y, p: np.maximum(1 - (2 * y - 1) * p, 0).mean(-1),
    "squared_hinge": lambda y, p: (np.maximum(1 - (2 * y - 1) * p, 0) ** 2).mean(-1),
    "categorical_hinge": lambda y, p: np.maximum(
        ((1 - y) * p).max(-1) - (y * p).sum(-1) + 1, 0),
    "huber": np_huber,
}
Y01 = (rand(4, 3, seed=1) > 0).astype(np.float64)
PROBS = softmax(rand(4, 3, seed=2))
DATA = {  # y_true, y_pred away from kinks, so finite differences are smooth
    "mse": (rand(4, 3, seed=1), rand(4, 3, seed=2)),
    "mae": (rand(4, 3, seed=1), rand(4, 3, seed=2)),
    "mape": (positive(4, 3, seed=1), positive(4, 3, seed=2)),
    "msle": (positive(4, 3, seed=1), positive(4, 3, seed=2)),
    "kld": (softmax(rand(4, 3, seed=1)), PROBS),
    "poisson": (positive(4, 3, seed=1), positive(4, 3, seed=2)),
    "log_cosh": (rand(4, 3, seed=1), rand(4, 3, seed=2)),
    "cosine_similarity": (rand(4, 3, seed=1), rand(4, 3, seed=2)),
    "hinge": (Y01, rand(4, 3, seed=3, low=-0.9, high=0.9)),
    "squared_hinge": (Y01, rand(4, 3, seed=3, low=-0.9, high=0.9)),
    "categorical_hinge": (onehot(np.array([0, 2, 1, 1]), 3), rand(4, 3, seed=2)),
    "huber": (rand(4, 3, seed=1), rand(4, 3, seed=2) * 0.7),
}
CLASSES = {"mse": losses.MeanSquaredError, "mae": losses.MeanAbsoluteError,
           "mape": losses.MeanAbsolutePercentageError,
           "msle": losses.MeanSquaredLogarithmicError, "kld": losses.KLDivergence,
           "poisson": losses.Poisson, "log_cosh": losses.LogCosh,
           "cosine_similarity": losses.CosineSimilarity, "hinge": losses.Hinge,
           "squared_hinge": losses.SquaredHinge, "categorical_hinge": losses.CategoricalHinge,
           "huber": losses.Huber}


@pytest.mark.parametrize("name", sorted(REFS))
def test_functional_loss_values_and_gradients(name):
    y, p = DATA[name]
    fn = losses.get(name)
    check_op(lambda pred: fn(tf.constant(y), pred), lambda pred: REFS[name](y, pred), [p])


@pytest.mark.parametrize("name", sorted(REFS))
def test_loss_class_reduces_to_mean(name):
    y, p = DATA[name]
    loss = CLASSES[name]()
    check_op(lambda pred: loss(tf.constant(y), pred), lambda pred: REFS[name](y, pred).mean(),
             [p], order=1)
    out = loss(y.astype(np.float32), p.astype(np.float32))
    assert out.dtype == tf.float32 and out.shape == ()


CE_CASES = [
    ("cce-probs", lambda: losses.CategoricalCrossentropy(), lambda y, p: np_cce(y, p),
     onehot(np.array([0, 2, 1, 1]), 3), PROBS),
    ("cce-logits", lambda: losses.CategoricalCrossentropy(from_logits=True),
     lambda y, p: np_cce(y, p, from_logits=True), onehot(np.array([0, 2, 1, 1]), 3),
     rand(4, 3, seed=5)),
    ("cce-smoothing", lambda: losses.CategoricalCrossentropy(label_smoothing=0.2),
     lambda y, p: np_cce(y, p, ls=0.2), onehot(np.array([0, 2, 1, 1]), 3), PROBS),
    ("cce-unnormalised", lambda: losses.CategoricalCrossentropy(),
     lambda y, p: np_cce(y, p), onehot(np.array([0, 2, 1, 1]), 3), positive(4, 3, seed=6)),
    ("cce-axis0", lambda: losses.CategoricalCrossentropy(from_logits=True, axis=0),
     lambda y, p: np_cce(y, p, from_logits=True, axis=0), onehot(np.array([0, 2, 1]), 4).T,
     rand(4, 3, seed=5)),
    ("bce-probs", lambda: losses.BinaryCrossentropy(), lambda y, p: np_bce(y, p), Y01,
     softmax(rand(4, 3, seed=2), axis=0)),
    ("bce-logits", lambda: losses.BinaryCrossentropy(from_logits=True),
     lambda y, p: np_bce(y, p, from_logits=True), Y01, rand(4, 3, seed=5)),
    ("bce-smoothing", lambda: losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
     lambda y, p: np_bce(y, p, from_logits=True, ls=0.1), Y01, rand(4, 3, seed=5)),
]


@pytest.mark.parametrize("name,make,ref,y,p", CE_CASES, ids=[c[0] for c in CE_CASES])
def test_crossentropies(name, make, ref, y, p):
    loss = make()
    check_op(lambda pred: loss(tf.constant(y), pred), lambda pred: ref(y, pred).mean(), [p])
    none = make()
    none.reduction = losses.Reduction.NONE
    np.testing.assert_allclose(none(y, p).numpy(), ref(y, p), rtol=1e-6)


@pytest.mark.parametrize("from_logits", [False, True])
def test_sparse_categorical_crossentropy(from_logits):
    labels = np.array([0, 2, 1, 1])
    p = rand(4, 3, seed=5) if from_logits else PROBS
    loss = losses.SparseCategoricalCrossentropy(from_logits=from_logits)
    check_op(lambda pred: loss(labels, pred),
             lambda pred: np_scce(labels, pred, from_logits).mean(), [p])
    # labels as [batch, 1], as floats, and the functional form agree
    for lab in (labels[:, None], labels.astype(np.float32), tf.constant(labels)):
        np.testing.assert_allclose(loss(lab, p).numpy(), np_scce(labels, p, from_logits).mean(),
                                   rtol=1e-6)
    fn = losses.sparse_categorical_crossentropy(labels, p, from_logits=from_logits)
    np.testing.assert_allclose(fn.numpy(), np_scce(labels, p, from_logits), rtol=1e-6)


def test_sparse_sequence_labels_and_axis():
    labels = np.array([[0, 1, 2], [2, 2, 0]])
    logits = rand(2, 3, 4, seed=3)
    out = losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out.numpy(), np_scce(labels, logits, True), rtol=1e-6)
    moved = np.moveaxis(logits, -1, 1)  # classes on axis 1
    out = losses.sparse_categorical_crossentropy(labels, moved, from_logits=True, axis=1)
    np.testing.assert_allclose(out.numpy(), np_scce(labels, logits, True), rtol=1e-6)


def test_sparse_ignore_class():
    labels = np.array([0, -1, 1, -1])
    logits = rand(4, 3, seed=5)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    per = np_scce(np.array([0, 0, 1, 0]), logits, True) * np.array([1, 0, 1, 0])
    np.testing.assert_allclose(loss(labels, logits).numpy(), per.sum() / 2, rtol=1e-6)
    none = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1,
                                                reduction="none")
    np.testing.assert_allclose(none(labels, logits).numpy(), per, rtol=1e-6)


def test_probabilities_are_clipped():
    y = np.array([[1.0, 0.0]])
    p = np.array([[0.0, 1.0]])
    out = losses.categorical_crossentropy(y, p).numpy()
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, [-np.log(EPS)], rtol=1e-3)
    assert np.isfinite(losses.binary_crossentropy(y, p).numpy()).all()
    assert np.isfinite(losses.sparse_categorical_crossentropy([0], p).numpy()).all()


def test_softmax_output_uses_logits_when_known():
    logits = tf.constant([[30.0, -30.0, 0.0]])
    probs = tf.nn.softmax(logits)
    clipped = losses.categorical_crossentropy([[0.0, 1.0, 0.0]], probs).numpy()[0]
    losses._remember_logits(probs, logits, "softmax")
    exact = losses.categorical_crossentropy([[0.0, 1.0, 0.0]], probs).numpy()[0]
    assert exact == pytest.approx(60.0, rel=1e-5) and clipped == pytest.approx(-np.log(EPS),
                                                                              rel=1e-3)
    x = tf.Variable([[3.0, -3.0, 0.0]])
    with tf.GradientTape() as tape:
        logits = x * 1.0
        p = tf.nn.softmax(logits)
        losses._remember_logits(p, logits, "softmax")
        loss = losses.sparse_categorical_crossentropy([1], p)
    grad = tape.gradient(loss, x).numpy()
    np.testing.assert_allclose(grad, softmax(np.array([[3.0, -3.0, 0.0]])) - [[0, 1, 0]],
                               rtol=1e-5, atol=1e-6)


# -- reductions and sample weights ------------------------------------------------------------
def test_reductions_and_sample_weights():
    y, p = rand(4, 3, seed=1), rand(4, 3, seed=2)
    per = ((p - y) ** 2).mean(-1)
    w = np.array([1.0, 0.0, 2.0, 0.5])
    mse = losses.MeanSquaredError
    np.testing.assert_allclose(mse()(y, p).numpy(), per.mean())
    np.testing.assert_allclose(mse(reduction="sum")(y, p).numpy(), per.sum())
    np.testing.assert_allclose(mse(reduction=losses.Reduction.NONE)(y, p).numpy(), per)
    # SUM_OVER_BATCH_SIZE divides the weighted sum by the number of elements
    np.testing.assert_allclose(mse()(y, p, sample_weight=w).numpy(), (per * w).sum() / 4)
    np.testing.assert_allclose(mse()(y, p, sample_weight=w[:, None]).numpy(),
                               (per * w).sum() / 4)
    np.testing.assert_allclose(mse()(y, p, sample_weight=2.0).numpy(), 2 * per.mean())
    np.testing.assert_allclose(mse(reduction="sum")(y, p, sample_weight=w).numpy(),
                               (per * w).sum())
    np.testing.assert_allclose(mse(reduction="none")(y, p, sample_weight=w).numpy(), per * w)
    with pytest.raises(ValueError, match="sample_weight of shape"):
        mse()(y, p, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        mse(reduction="mean")


def test_keras_rank_matching():
    y = np.array([1.0, 0.0, 1.0])
    p = np.array([[0.9], [0.2], [0.6]])
    expected = np_bce(y[:, None], p).mean()
    np.testing.assert_allclose(losses.BinaryCrossentropy()(y, p).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(losses.MeanSquaredError()(y[:, None], p[:, 0]).numpy(),
                               ((p[:, 0] - y) ** 2).mean(), rtol=1e-6)


def test_dtypes():
    y, p = rand(4, 3, seed=1).astype(np.float32), rand(4, 3, seed=2).astype(np.float32)
    assert losses.mse(y, p).dtype == tf.float32
    assert losses.mse(y.astype(np.float64), p.astype(np.float64)).dtype == tf.float64
    assert losses.mse(np.array([[1, 2]]), np.array([[1, 3]])).dtype == tf.float32
    assert losses.MeanSquaredError()(y.astype(np.int32), p).dtype == tf.float32


# -- errors ------------------------------------------------------------------------------------
def test_errors_name_the_loss():
    with pytest.raises(ValueError, match=r"categorical_crossentropy \(CategoricalCrossentropy\)"
                       r": Shapes \(2, 1\) and \(2, 3\) are incompatible.*sparse"):
        losses.CategoricalCrossentropy()(np.array([[0], [2]]), PROBS[:2])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"SparseCategoricalCrossentropy.*label value of 3.*\[0, 3\)"):
        losses.SparseCategoricalCrossentropy()(np.array([0, 3]), PROBS[:2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="label value of -1"):
        losses.SparseCategoricalCrossentropy()(np.array([-1, 0]), PROBS[:2])
    with pytest.raises(ValueError, match=r"SparseCategoricalCrossentropy.*one-hot labels use "
                       r"categorical_crossentropy"):
        losses.SparseCategoricalCrossentropy()(onehot(np.array([0, 1]), 3), PROBS[:2])
    with pytest.raises(ValueError, match=r"mean_squared_error \(MeanSquaredError\).*\(4, 2\)"):
        losses.MeanSquaredError()(np.ones((4, 2)), np.ones((4, 3)))
    with pytest.raises(NotImplementedError):
        losses.Loss()(1.0, 1.0)


# -- lookup and config -------------------------------------------------------------------------
def test_get_aliases_and_unknown():
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get("MAE") is losses.mean_absolute_error
    assert losses.get("categorical_crossentropy") is losses.categorical_crossentropy
    assert isinstance(losses.get("CategoricalCrossentropy"), losses.CategoricalCrossentropy)
    assert losses.get(None) is None
    fn = lambda y, p: y  # noqa: E731
    assert losses.get(fn) is fn
    with pytest.raises(ValueError, match=r"Unknown loss function: 'msee'.*'mse'"):
        losses.get("msee")
    with pytest.raises(ValueError, match="Could not interpret"):
        losses.get(3)


def test_config_roundtrip():
    loss = losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1,
                                          reduction="sum", name="cce")
    config = loss.get_config()
    assert config == {"from_logits": True, "label_smoothing": 0.1, "axis": -1,
                      "reduction": "sum", "name": "cce"}
    clone = losses.CategoricalCrossentropy.from_config(config)
    y, p = onehot(np.array([0, 2, 1, 1]), 3), rand(4, 3, seed=5)
    assert float(clone(y, p)) == pytest.approx(float(loss(y, p)))
    again = losses.deserialize(losses.serialize(losses.Huber(delta=2.0)))
    assert isinstance(again, losses.Huber) and again.get_config()["delta"] == 2.0
    assert losses.serialize(losses.mse) == "mean_squared_error"


def test_custom_loss_subclass():
    class Quartic(losses.Loss):
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.square(tf.square(y_pred - y_true)), axis=-1)

    q = Quartic(name="quartic")
    y, p = rand(4, 3, seed=1), rand(4, 3, seed=2)
    np.testing.assert_allclose(q(y, p).numpy(), ((p - y) ** 4).mean(-1).mean(), rtol=1e-6)
    assert q.get_config() == {"reduction": "auto", "name": "quartic"}


def _huber_np(y_true, y_pred, threshold=1.0):
    error = y_true.astype(np.float32) - y_pred
    return np.where(np.abs(error) < threshold, error ** 2 / 2,
                    threshold * np.abs(error) - threshold ** 2 / 2).mean()


def test_hands_on_ml_custom_huber_on_float64_targets_saved_and_loaded(tmp_path):
    """Hands-On ML ch. 12: `huber_fn(y_true, y_pred)` computes y_true - y_pred with float64
    California-housing targets (Keras hands a loss targets in the predictions' dtype), then
    `load_model(..., custom_objects={"huber_fn": huber_fn})` and a HuberLoss class."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 8))
    y = X[:, :1] * 0.5 + 2  # float64, as sklearn's targets

    def huber_fn(y_true, y_pred):
        error = y_true - y_pred
        is_small_error = tf.abs(error) < 1
        squared_loss = tf.square(error) / 2
        linear_loss = tf.abs(error) - 0.5
        return tf.where(is_small_error, squared_loss, linear_loss)

    class HuberLoss(tf.keras.losses.Loss):
        def __init__(self, threshold=1.0, **kwargs):
            self.threshold = threshold
            super().__init__(**kwargs)

        def call(self, y_true, y_pred):
            error = y_true - y_pred
            is_small_error = tf.abs(error) < self.threshold
            squared_loss = tf.square(error) / 2
            linear_loss = self.threshold * tf.abs(error) - self.threshold**2 / 2
            return tf.where(is_small_error, squared_loss, linear_loss)

        def get_config(self):
            return {**super().get_config(), "threshold": self.threshold}

    model = tf.keras.Sequential([
        tf.keras.layers.Dense(30, activation="relu", kernel_initializer="he_normal",
                              input_shape=[8]),
        tf.keras.layers.Dense(1)])
    for loss, threshold, name in ((huber_fn, 1.0, "huber_fn"), (HuberLoss(2.), 2.0,
                                                                "HuberLoss")):
        model.compile(loss=loss, optimizer="nadam", metrics=["mae"])
        model.fit(X, y, epochs=1, verbose=0)
        expected = _huber_np(y, model.predict(X, verbose=0), threshold)
        assert model.evaluate(X, y, verbose=0)[0] == pytest.approx(expected, rel=1e-5)
        model.save(str(tmp_path / f"{name}.keras"))
        custom = {"huber_fn": huber_fn} if name == "huber_fn" else {"HuberLoss": HuberLoss}
        loaded = tf.keras.models.load_model(str(tmp_path / f"{name}.keras"),
                                            custom_objects=custom)
        assert loaded.evaluate(X, y, verbose=0)[0] == pytest.approx(expected, rel=1e-5)
        if name == "HuberLoss":
            assert loaded.loss.threshold == 2.0  # the book's check that loading worked
    with pytest.raises(ValueError, match="huber_fn"):
        tf.keras.models.load_model(str(tmp_path / "huber_fn.keras"))
