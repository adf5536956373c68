"""tf.keras.metrics: state over batches, weights, results against hand-computed NumPy values,
AUC against the trapezoid rule on the same thresholds, and compile's metric resolution."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras import losses, metrics

RNG = np.random.default_rng(0)


def batches(metric, pairs, weights=None):
    for i, (y, p) in enumerate(pairs):
        metric.update_state(y, p, None if weights is None else weights[i])
    return metric.result().numpy()


# -- Mean / Sum and the Metric base ------------------------------------------------------------
def test_mean_and_sum():
    m = metrics.Mean()
    m.update_state([1.0, 2.0, 3.0])
    m.update_state(np.array([[4.0]]))
    assert m.result().numpy() == pytest.approx(2.5) and m.result().dtype == tf.float32
    m.update_state([10.0, 20.0], sample_weight=[0.0, 1.0])
    assert m.result().numpy() == pytest.approx(30.0 / 5.0)
    assert [v.name for v in m.variables] == ["total:0", "count:0"]
    m.reset_state()
    assert m.result().numpy() == 0.0 and [float(v) for v in m.variables] == [0.0, 0.0]
    s = metrics.Sum()
    s.update_state([[1.0, 2.0], [3.0, 4.0]], sample_weight=[1.0, 0.5])
    assert s.result().numpy() == pytest.approx(3.0 + 3.5)
    s.reset_states()
    assert float(s(5.0)) == 5.0


def test_weights_of_lower_rank_average_the_values():
    m = metrics.Mean()
    m.update_state(np.array([[[1.0, 3.0]], [[5.0, 7.0]]]), sample_weight=np.array([1.0, 0.0]))
    assert float(m.result()) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="sample_weight of shape"):
        metrics.Mean().update_state(np.ones((2, 3)), sample_weight=np.ones(5))


def test_custom_metric_subclass():
    class CountPositives(metrics.Metric):
        def __init__(self, name="count_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.count = self.add_weight(name="count", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.count.assign_add(tf.reduce_sum(tf.cast(y_pred > 0, tf.float32)))

        def result(self):
            return self.count

    m = CountPositives()
    m.update_state(None, tf.constant([1.0, -1.0, 2.0]))
    m.update_state(None, tf.constant([3.0]))
    assert float(m.result()) == 3.0 and m.name == "count_positives"
    assert len(m.variables) == 1 and m.trainable_weights == []
    m.reset_state()
    assert float(m.result()) == 0.0


def test_metrics_are_invisible_to_a_tape():
    x = tf.Variable([[0.2, 0.8]])
    acc = metrics.CategoricalAccuracy()
    with tf.GradientTape() as tape:
        y = x * 2.0
        acc.update_state([[0.0, 1.0]], y)
        loss = tf.reduce_sum(y)
    assert tape.gradient(loss, x) is not None
    assert float(acc.result()) == 1.0


# -- accuracies ----------------------------------------------------------------------------------
def test_accuracy_family():
    assert float(metrics.Accuracy()([1, 2, 3, 4], [0, 2, 3, 4])) == pytest.approx(0.75)
    b = metrics.BinaryAccuracy()
    assert float(b([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])) == pytest.approx(0.75)
    b = metrics.BinaryAccuracy(threshold=0.7)
    assert float(b([[1], [1], [0], [0]], [[0.98], [0.6], [0], [0.6]])) == pytest.approx(0.75)
    c = metrics.CategoricalAccuracy()
    assert float(c([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])) == 0.5
    s = metrics.SparseCategoricalAccuracy()
    assert float(s([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])) == 0.5
    assert float(s([2, 1], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])) == 0.5  # accumulates
    s.reset_state()
    assert float(s(np.array([2.0, 1.0]), [[0.1, 0.2, 0.7], [0.05, 0.95, 0]],
                   sample_weight=[0.7, 0.3])) == pytest.approx(1.0)


def test_accuracies_on_random_batches_match_numpy():
    n, c = 50, 7
    pairs, w = [], []
    for _ in range(3):
        labels = RNG.integers(0, c, n)
        pairs.append((labels, RNG.random((n, c))))
        w.append(RNG.random(n))
    got = batches(metrics.SparseCategoricalAccuracy(), pairs, w)
    hits = np.concatenate([(p.argmax(-1) == y) for y, p in pairs])
    ws = np.concatenate(w)
    assert got == pytest.approx((hits * ws).sum() / ws.sum(), rel=1e-6)
    got = batches(metrics.CategoricalAccuracy(), [(np.eye(c)[y], p) for y, p in pairs])
    assert got == pytest.approx(hits.mean(), rel=1e-6)
    for k in (1, 3):
        got = batches(metrics.SparseTopKCategoricalAccuracy(k=k), pairs)
        ranks = np.concatenate([(p > p[np.arange(n), y][:, None]).sum(-1) for y, p in pairs])
        assert got == pytest.approx((ranks < k).mean(), rel=1e-6)
        got = batches(metrics.TopKCategoricalAccuracy(k=k),
                      [(np.eye(c)[y], p) for y, p in pairs])
        assert got == pytest.approx((ranks < k).mean(), rel=1e-6)


def test_top_k_ties_and_bad_labels():
    m = metrics.SparseTopKCategoricalAccuracy(k=1)
    assert float(m([0, 1], [[0.5, 0.5, 0.1], [0.2, 0.2, 0.6]])) == 0.5  # a tie counts in
    assert float(metrics.sparse_top_k_categorical_accuracy([5], [[0.1, 0.9]], k=2)[0]) == 0.0


def test_accuracy_shape_errors():
    with pytest.raises(ValueError, match="sparse labels are class indices"):
        metrics.SparseCategoricalAccuracy()(np.eye(3)[:2], np.eye(3)[:2])
    with pytest.raises(ValueError, match="sparse categorical accuracy"):
        metrics.CategoricalAccuracy()([[1], [2]], np.eye(3)[:2])


# -- regression metrics -------------------------------------------------------------------------
@pytest.mark.parametrize("cls,ref", [
    (metrics.MeanSquaredError, lambda y, p: ((p - y) ** 2).mean(-1)),
    (metrics.MeanAbsoluteError, lambda y, p: np.abs(p - y).mean(-1)),
    (metrics.MeanAbsolutePercentageError,
     lambda y, p: 100 * (np.abs(y - p) / np.maximum(np.abs(y), 1e-7)).mean(-1)),
    (metrics.MeanSquaredLogarithmicError,
     lambda y, p: ((np.log(np.maximum(p, 1e-7) + 1) - np.log(np.maximum(y, 1e-7) + 1)) ** 2
                   ).mean(-1)),
    (metrics.CosineSimilarity,
     lambda y, p: (y * p).sum(-1) / np.linalg.norm(y, axis=-1) / np.linalg.norm(p, axis=-1)),
    (metrics.BinaryCrossentropy, lambda y, p: losses.binary_crossentropy(y, p).numpy()),
    (metrics.LogCoshError, lambda y, p: np.log(np.cosh(p - y)).mean(-1)),
])
def test_regression_metrics(cls, ref):
    pairs = [(RNG.random((6, 4)), RNG.random((6, 4))) for _ in range(3)]
    w = [RNG.random(6) for _ in range(3)]
    got = batches(cls(), pairs, w)
    per = np.concatenate([ref(y, p) for y, p in pairs])
    ws = np.concatenate(w)
    assert got == pytest.approx((per * ws).sum() / ws.sum(), rel=1e-5)


def test_root_mean_squared_error():
    m = metrics.RootMeanSquaredError()
    m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]])
    assert float(m.result()) == pytest.approx(0.5)
    m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]], sample_weight=[1, 0])
    assert float(m.result()) == pytest.approx(np.sqrt(2 / 6))


# -- precision / recall / confusion counts --------------------------------------------------------
def test_precision_recall():
    p = metrics.Precision()
    assert float(p([0, 1, 1, 1], [1, 0, 1, 1])) == pytest.approx(2 / 3)
    r = metrics.Recall()
    assert float(r([0, 1, 1, 1], [1, 0, 1, 1])) == pytest.approx(2 / 3)
    y = RNG.integers(0, 2, 200)
    s = RNG.random(200)
    w = RNG.random(200)
    th = [0.0, 0.25, 0.5, 0.9]
    prec = metrics.Precision(thresholds=th)(y, s, sample_weight=w).numpy()
    rec = metrics.Recall(thresholds=th)(y, s, sample_weight=w).numpy()
    for i, t in enumerate(th):
        pos = s > t
        tp = (w * (pos & (y == 1))).sum()
        assert prec[i] == pytest.approx(tp / (w * pos).sum(), rel=1e-5)
        assert rec[i] == pytest.approx(tp / (w * (y == 1)).sum(), rel=1e-5)
    assert float(metrics.Precision()([0, 0], [0.1, 0.2])) == 0.0  # 0/0 -> 0


def test_precision_top_k_and_class_id():
    y = np.array([[0, 0, 1, 1], [1, 0, 0, 0]])
    p = np.array([[0.1, 0.9, 0.8, 0.2], [0.7, 0.6, 0.1, 0.0]])
    assert float(metrics.Precision(top_k=2)(y, p)) == pytest.approx(2 / 4)
    assert float(metrics.Recall(top_k=1)(y, p)) == pytest.approx(1 / 3)
    assert float(metrics.Precision(class_id=2)(y, p)) == pytest.approx(1.0)
    assert float(metrics.Recall(class_id=3)(y, p)) == 0.0


def test_confusion_counts():
    y, p = [0, 1, 1, 0], [0.7, 0.9, 0.2, 0.1]
    assert float(metrics.TruePositives()(y, p)) == 1.0
    assert float(metrics.FalsePositives()(y, p)) == 1.0
    assert float(metrics.TrueNegatives()(y, p)) == 1.0
    assert float(metrics.FalseNegatives()(y, p)) == 1.0
    np.testing.assert_array_equal(metrics.TruePositives(thresholds=[0.15, 0.5])(y, p).numpy(),
                                  [2.0, 1.0])
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]"):
        metrics.Precision(thresholds=[1.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="predictions must be >= 0"):
        metrics.Precision()([1], [2.0])


# -- AUC ---------------------------------------------------------------------------------------
def auc_reference(y, s, w, curve, method, num_thresholds=200):
    eps = 1e-7
    th = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    th = np.array([-eps] + th + [1 + eps])
    pos = s[None, :] > th[:, None]
    tp = (w * pos * (y == 1)).sum(1)
    fp = (w * pos * (y == 0)).sum(1)
    fn = (w * ~pos * (y == 1)).sum(1)
    tn = (w * ~pos * (y == 0)).sum(1)
    div = lambda a, b: np.where(b == 0, 0.0, a / np.where(b == 0, 1, b))  # noqa: E731
    if curve == "ROC":
        x, h = div(fp, fp + tn), div(tp, tp + fn)
    else:
        x, h = div(tp, tp + fn), div(tp, tp + fp)
    heights = {"interpolation": (h[:-1] + h[1:]) / 2, "minoring": np.minimum(h[:-1], h[1:]),
               "majoring": np.maximum(h[:-1], h[1:])}[method]
    return ((x[:-1] - x[1:]) * heights).sum()


@pytest.mark.parametrize("curve,method", [("ROC", "interpolation"), ("ROC", "minoring"),
                                          ("ROC", "majoring"), ("PR", "minoring"),
                                          ("PR", "majoring")])
def test_auc_matches_direct_riemann_sum(curve, method):
    m = metrics.AUC(curve=curve, summation_method=method)
    ys, ss, ws = [], [], []
    for _ in range(3):
        y, s, w = RNG.integers(0, 2, 100), RNG.random(100), RNG.random(100)
        m.update_state(y, s, sample_weight=w)
        ys.append(y), ss.append(s), ws.append(w)
    want = auc_reference(np.concatenate(ys), np.concatenate(ss), np.concatenate(ws), curve,
                         method)
    assert float(m.result()) == pytest.approx(want, rel=1e-5)


def test_auc_roc_close_to_exact_and_docs_example():
    m = metrics.AUC(num_thresholds=3)
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    assert float(m.result()) == pytest.approx(0.75)
    y, s = RNG.integers(0, 2, 400), RNG.random(400)
    exact = np.mean([(s[y == 1][:, None] > s[y == 0][None, :]).mean()])
    assert float(metrics.AUC(num_thresholds=1000)(y, s)) == pytest.approx(exact, abs=2e-3)
    assert float(metrics.AUC(num_thresholds=1000, from_logits=True)(
        y, np.log(s / (1 - s)))) == pytest.approx(exact, abs=2e-3)


def test_auc_pr_interpolation():
    y = RNG.integers(0, 2, 300)
    s = np.clip(0.3 * y + 0.7 * RNG.random(300), 0, 1)
    m = metrics.AUC(curve="PR", num_thresholds=500)
    got = float(m(y, s))
    # average precision over the sorted scores approximates the interpolated PR-AUC
    order = np.argsort(-s)
    hits = y[order]
    ap = (np.cumsum(hits) / np.arange(1, len(y) + 1))[hits == 1].mean()
    assert got == pytest.approx(ap, abs=0.02)
    assert 0.0 < got <= 1.0


def test_auc_multi_label_and_config():
    y = RNG.integers(0, 2, (80, 3))
    s = RNG.random((80, 3))
    m = metrics.AUC(multi_label=True)
    got = float(m(y, s))
    per = [auc_reference(y[:, j], s[:, j], np.ones(80), "ROC", "interpolation")
           for j in range(3)]
    assert got == pytest.approx(np.mean(per), rel=1e-5)
    lw = [1.0, 2.0, 0.0]
    m = metrics.AUC(multi_label=True, label_weights=lw)
    assert float(m(y, s)) == pytest.approx(np.dot(per, lw) / 3.0, rel=1e-5)
    pooled = float(metrics.AUC()(y, s))
    assert pooled == pytest.approx(auc_reference(y.reshape(-1), s.reshape(-1),
                                                 np.ones(240), "ROC", "interpolation"),
                                   rel=1e-5)
    config = metrics.AUC(num_thresholds=50, curve="PR", name="prauc").get_config()
    clone = metrics.AUC.from_config(config)
    assert clone.num_thresholds == 50 and clone.curve == "PR" and clone.name == "prauc"
    with pytest.raises(ValueError, match="Invalid AUC curve"):
        metrics.AUC(curve="XY")
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.AUC(num_thresholds=1)
    m = metrics.AUC()
    m(y[:, 0], s[:, 0])
    m.reset_state()
    assert float(m.result()) == 0.0 and float(m.true_positives.numpy().sum()) == 0.0


def test_auc_names_are_unique():
    a, b = metrics.AUC(), metrics.AUC()
    assert a.name != b.name and a.name.startswith("auc") and b.name.startswith("auc")


# -- resolve (compile's metric choice) -------------------------------------------------------------
@pytest.mark.parametrize("loss,yt,yp,expected", [
    ("binary_crossentropy", (None, 1), (None, 1), metrics.BinaryAccuracy),
    (losses.BinaryCrossentropy(), (None, 3), (None, 3), metrics.BinaryAccuracy),
    (None, (None, 1), (None, 1), metrics.BinaryAccuracy),
    ("mse", (None,), (None, 1), metrics.BinaryAccuracy),
    ("sparse_categorical_crossentropy", (None, 10), (None, 10),
     metrics.SparseCategoricalAccuracy),
    (losses.SparseCategoricalCrossentropy(from_logits=True), (None,), (None, 10),
     metrics.SparseCategoricalAccuracy),
    (None, (None,), (None, 10), metrics.SparseCategoricalAccuracy),
    (None, (32, 1), (32, 10), metrics.SparseCategoricalAccuracy),
    ("categorical_crossentropy", (None, 10), (None, 10), metrics.CategoricalAccuracy),
    (losses.CategoricalCrossentropy(), (32, 10), (32, 10), metrics.CategoricalAccuracy),
    (None, tf.TensorShape([32, 10]), tf.TensorShape([32, 10]), metrics.CategoricalAccuracy),
])
def test_resolve_accuracy(loss, yt, yp, expected):
    for name in ("accuracy", "acc"):
        m = metrics.resolve(name, loss, yt, yp)
        assert type(m) is expected and m.name == name


def test_resolve_other_identifiers():
    m = metrics.resolve("mse", None, (None, 1), (None, 1))
    assert isinstance(m, metrics.MeanMetricWrapper) and m.name == "mse"
    assert float(m([[1.0]], [[3.0]])) == 4.0
    auc = metrics.AUC()
    assert metrics.resolve(auc) is auc
    assert isinstance(metrics.resolve("AUC"), metrics.AUC)
    assert isinstance(metrics.resolve(metrics.Precision), metrics.Precision)

    def my_metric(y_true, y_pred):
        return tf.reduce_mean(y_pred - y_true, axis=-1)
    m = metrics.resolve(my_metric)
    assert m.name == "my_metric" and float(m([[1.0, 1.0]], [[2.0, 4.0]])) == 2.0
    m = metrics.resolve(losses.MeanAbsoluteError())
    assert m.name == "mean_absolute_error" and float(m([[1.0]], [[3.0]])) == 2.0
    ce = metrics.resolve("crossentropy", "sparse_categorical_crossentropy", (None,), (None, 3))
    assert type(ce) is metrics.SparseCategoricalCrossentropy and ce.name == "crossentropy"
    assert metrics.resolve(None) is None
    with pytest.raises(ValueError, match=r"Unknown metric function: 'acuracy'.*'accuracy'"):
        metrics.resolve("acuracy")


def test_get_and_config():
    assert metrics.get("accuracy") is metrics.accuracy
    assert isinstance(metrics.get("BinaryAccuracy"), metrics.BinaryAccuracy)
    b = metrics.BinaryAccuracy(name="bacc", threshold=0.3)
    config = b.get_config()
    assert config == {"threshold": 0.3, "name": "bacc", "dtype": "float32"}
    clone = metrics.deserialize(metrics.serialize(b))
    assert isinstance(clone, metrics.BinaryAccuracy) and clone.threshold == 0.3
    t = metrics.TopKCategoricalAccuracy(k=3)
    assert metrics.TopKCategoricalAccuracy.from_config(t.get_config()).k == 3
    out = metrics.binary_accuracy(tf.constant([[1.0, 0.0]]), tf.constant([[0.6, 0.7]]))
    assert isinstance(out, tf.Tensor) and out.numpy().tolist() == [0.5]


def test_hands_on_ml_streaming_huber_metric_fits_on_float64_targets(tmp_path):
    """Hands-On ML ch. 12's HuberMetric (a Metric subclass calling huber_fn(y_true, y_pred))
    and `my_mae` metric function, compiled and fit on float64 NumPy targets: Keras feeds
    floating arrays in floatx, so y_true - y_pred sees two float32 tensors; the streaming
    values are the book's (14, then 7), and the saved model loads with custom_objects."""
    def create_huber(threshold=1.0):
        def huber_fn(y_true, y_pred):
            error = y_true - y_pred
            is_small_error = tf.abs(error) < threshold
            squared_loss = tf.square(error) / 2
            linear_loss = threshold * tf.abs(error) - threshold ** 2 / 2
            return tf.where(is_small_error, squared_loss, linear_loss)
        return huber_fn

    class HuberMetric(tf.keras.metrics.Metric):
        def __init__(self, threshold=1.0, **kwargs):
            super().__init__(**kwargs)
            self.threshold = threshold
            self.huber_fn = create_huber(threshold)
            self.total = self.add_weight(name="total", initializer="zeros")
            self.count = self.add_weight(name="count", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            sample_metrics = self.huber_fn(y_true, y_pred)
            self.total.assign_add(tf.reduce_sum(sample_metrics))
            self.count.assign_add(tf.cast(tf.size(y_true), tf.float32))

        def result(self):
            return self.total / self.count

        def get_config(self):
            return {**super().get_config(), "threshold": self.threshold}

    def my_mae(y_true, y_pred):
        return tf.reduce_mean(tf.abs(y_pred - y_true))

    m = HuberMetric(2.)
    assert float(m(tf.constant([[2.]]), tf.constant([[10.]]))) == 14.0
    assert float(m(tf.constant([[0.], [5.]]), tf.constant([[1.], [9.25]]))) == 7.0
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 8))
    y = X[:, :1] * 0.5 + 2  # float64
    model = tf.keras.Sequential([tf.keras.layers.Dense(30, activation="relu",
                                                       input_shape=[8]),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss=create_huber(2.0), optimizer="nadam",
                  metrics=[HuberMetric(2.0), my_mae])
    sample_weight = rng.random(len(y))
    model.fit(X, y, epochs=1, verbose=0, sample_weight=sample_weight)
    pred = model.predict(X, verbose=0)
    logs = model.evaluate(X, y, verbose=0, return_dict=True)
    error = y.astype(np.float32) - pred
    huber = np.where(np.abs(error) < 2, error ** 2 / 2, 2 * np.abs(error) - 2).mean()
    name = model.metrics[-2].name  # huber_metric_1: the second instance, as Keras names it
    assert name.startswith("huber_metric") and logs[name] == pytest.approx(huber, rel=1e-5)
    assert logs["my_mae"] == pytest.approx(np.abs(error).mean(), rel=1e-5)
    model.save(str(tmp_path / "m.keras"))
    loaded = tf.keras.models.load_model(str(tmp_path / "m.keras"), custom_objects={
        "huber_fn": create_huber(2.0), "HuberMetric": HuberMetric, "my_mae": my_mae})
    loaded.fit(X, y, epochs=1, verbose=0)
