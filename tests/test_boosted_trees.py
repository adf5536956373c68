"""tf.estimator.BoostedTreesClassifier / BoostedTreesRegressor: accuracy against
scikit-learn's GradientBoosting with the same n_trees/max_depth/learning_rate (TF 2.21
no longer ships estimators), TF's split and leaf formulas on a hand-computed case, step
accounting, resuming from model_dir, predictions and errors."""
import collections

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.feature_column import bucketized_column

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor  # noqa
from sklearn.metrics import r2_score  # noqa: E402

ACCURACY_TOLERANCE = 0.03   # |tensorlite accuracy - sklearn accuracy| on held-out data
R2_TOLERANCE = 0.03         # tensorlite's R2 may not trail sklearn's by more


def _input_fn(X, y=None, epochs=1, batches=1):
    """An input_fn yielding `batches` equal batches of (X, y) per epoch (NumPy, fast)."""
    def input_fn():
        for _ in range(epochs):
            for rows in np.array_split(np.arange(len(X)), batches):
                features = {f"f{i}": X[rows, i] for i in range(X.shape[1])}
                yield features, (None if y is None else y[rows])
    return input_fn


def _columns(n):
    return [tf.feature_column.numeric_column(f"f{i}") for i in range(n)]


def _split(X, y):
    return X[:1000], y[:1000], X[1000:], y[1000:]


@pytest.mark.parametrize("depth", [3, 6])
def test_binary_accuracy_close_to_sklearn(tmp_path, depth):
    X, y = make_classification(n_samples=2000, n_features=10, n_informative=4,
                               n_redundant=0, flip_y=0.05, random_state=0)
    Xtr, ytr, Xte, yte = _split(X, y)
    est = tf.estimator.BoostedTreesClassifier(_columns(10), n_batches_per_layer=1,
                                              n_trees=20, max_depth=depth, learning_rate=0.1,
                                              model_dir=str(tmp_path))
    est.train(_input_fn(Xtr, ytr, epochs=1000))
    metrics = est.evaluate(_input_fn(Xte, yte))
    sk = GradientBoostingClassifier(n_estimators=20, max_depth=depth, learning_rate=0.1,
                                    random_state=0).fit(Xtr, ytr)
    assert abs(metrics["accuracy"] - sk.score(Xte, yte)) <= ACCURACY_TOLERANCE
    assert metrics["accuracy"] > 0.75 and metrics["auc"] > 0.85
    # one quantile batch, then n_trees * max_depth layers of one batch each
    assert metrics["global_step"] == 1 + 20 * depth
    assert {"accuracy", "accuracy_baseline", "auc", "average_loss", "loss", "precision",
            "recall", "label/mean", "prediction/mean", "global_step"} <= set(metrics)


def test_multiclass_accuracy_close_to_sklearn(tmp_path):
    X, y = make_classification(n_samples=2000, n_features=8, n_informative=4,
                               n_redundant=0, n_classes=3, n_clusters_per_class=1,
                               random_state=1)
    Xtr, ytr, Xte, yte = _split(X, y)
    est = tf.estimator.BoostedTreesClassifier(_columns(8), n_batches_per_layer=1,
                                              n_classes=3, n_trees=20, max_depth=3,
                                              model_dir=str(tmp_path))
    est.train(_input_fn(Xtr, ytr, epochs=1000))
    accuracy = est.evaluate(_input_fn(Xte, yte))["accuracy"]
    sk = GradientBoostingClassifier(n_estimators=20, max_depth=3, learning_rate=0.1,
                                    random_state=0).fit(Xtr, ytr)
    assert abs(accuracy - sk.score(Xte, yte)) <= ACCURACY_TOLERANCE
    pred = next(est.predict(_input_fn(Xte[:1])))
    assert pred["probabilities"].shape == (3,) and "logistic" not in pred
    assert np.isclose(pred["probabilities"].sum(), 1.0)


def test_regressor_r2_not_worse_than_sklearn(tmp_path):
    X, y = make_regression(n_samples=2000, n_features=10, n_informative=3, noise=10.0,
                           random_state=0)
    y = y + 50.0
    Xtr, ytr, Xte, yte = _split(X, y)
    est = tf.estimator.BoostedTreesRegressor(_columns(10), n_batches_per_layer=1, n_trees=20,
                                             max_depth=3, learning_rate=0.1, center_bias=True,
                                             model_dir=str(tmp_path))
    est.train(_input_fn(Xtr, ytr, epochs=1000))
    preds = list(est.predict(_input_fn(Xte)))
    assert set(preds[0]) == {"predictions"} and preds[0]["predictions"].shape == (1,)
    r2 = r2_score(yte, np.array([p["predictions"][0] for p in preds]))
    sk = GradientBoostingRegressor(n_estimators=20, max_depth=3, learning_rate=0.1,
                                   random_state=0).fit(Xtr, ytr)
    # TF's layer-by-layer boosting takes a shrunk Newton step per layer, so it fits this
    # smooth target better than sklearn's one step per tree; it must not do worse
    assert r2 >= r2_score(yte, sk.predict(Xte)) - R2_TOLERANCE and r2 > 0.8
    metrics = est.evaluate(_input_fn(Xte, yte))
    assert {"average_loss", "loss", "label/mean", "prediction/mean"} <= set(metrics)
    assert np.isclose(metrics["label/mean"], yte.mean(), rtol=1e-5)


def test_center_bias_sets_the_label_mean_first(tmp_path):
    X, y = np.random.default_rng(0).normal(size=(200, 2)), np.linspace(10.0, 30.0, 200)
    est = tf.estimator.BoostedTreesRegressor(_columns(2), n_batches_per_layer=1, n_trees=1,
                                             max_depth=1, center_bias=True,
                                             model_dir=str(tmp_path))
    est.train(_input_fn(X, y, epochs=100), max_steps=3)   # sketch, then two Newton rounds
    preds = [p["predictions"][0] for p in est.predict(_input_fn(X[:5]))]
    np.testing.assert_allclose(preds, y.mean(), rtol=1e-6)


def test_feature_importances_rank_informative_features_first(tmp_path):
    X, y = make_classification(n_samples=1000, n_features=8, n_informative=3,
                               n_redundant=0, shuffle=False, random_state=3)
    rows = np.random.default_rng(3).permutation(len(X))   # informative: f0, f1, f2
    est = tf.estimator.BoostedTreesClassifier(_columns(8), n_batches_per_layer=1, n_trees=10,
                                              max_depth=3, model_dir=str(tmp_path))
    est.train(_input_fn(X[rows], y[rows], epochs=1000))
    raw = est.experimental_feature_importances()
    assert isinstance(raw, collections.OrderedDict) and len(raw) == 8
    assert set(list(raw)[:3]) == {"f0", "f1", "f2"}
    assert list(raw.values()) == sorted(raw.values(), reverse=True)
    norm = est.experimental_feature_importances(normalize=True)
    assert np.isclose(sum(norm.values()), 1.0) and list(norm) == list(raw)


def test_one_split_matches_tf_formulas(tmp_path):
    """Depth-1 tree on x in buckets {0, 1}: leaves are learning_rate * -G/(H + l2) with G, H
    per-instance means (sums / batch size); the gain GL^2/(HL+l2) + GR^2/(HR+l2) -
    G^2/(H+l2) - tree_complexity is the importance."""
    x = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    y = np.array([0, 0, 1, 1, 1, 1, 0, 1])
    col = bucketized_column(tf.feature_column.numeric_column("f0"), [0.5])
    lr, l2, tc = 0.3, 0.05, 0.01
    est = tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=1, n_trees=1,
                                              max_depth=1, learning_rate=lr,
                                              l2_regularization=l2, tree_complexity=tc,
                                              pruning_mode="pre", model_dir=str(tmp_path))
    est.train(_input_fn(x[:, None], y, epochs=10))
    g, h = (0.5 - y) / len(y), np.full(len(y), 0.25 / len(y))   # logits 0: p = 0.5
    left, right = x == 0, x == 1
    leaf = {0: -lr * g[left].sum() / (h[left].sum() + l2),
            1: -lr * g[right].sum() / (h[right].sum() + l2)}
    logits = [p["logits"][0] for p in est.predict(_input_fn(np.array([[0.0], [1.0]])))]
    np.testing.assert_allclose(logits, [leaf[0], leaf[1]], rtol=1e-5)

    def score(mask):
        return g[mask].sum() ** 2 / (h[mask].sum() + l2)
    gain = score(left) + score(right) - score(left | right) - tc
    assert np.isclose(est.experimental_feature_importances()["f0_bucketized"], gain)
    assert est.evaluate(_input_fn(x[:, None], y))["global_step"] == 1   # no quantile step


def test_batches_per_layer_average_like_one_whole_batch(tmp_path):
    """Stats are per-instance means averaged over n_batches_per_layer equal batches, so two
    halves grow the same trees as one whole batch (the quantiles see the same data)."""
    X, y = make_classification(n_samples=400, n_features=4, random_state=5)
    preds = {}
    for batches in (1, 2):
        est = tf.estimator.BoostedTreesClassifier(_columns(4), n_batches_per_layer=batches,
                                                  n_trees=3, max_depth=2, l2_regularization=0.01,
                                                  model_dir=str(tmp_path / str(batches)))
        est.train(_input_fn(X, y, epochs=100, batches=batches))
        preds[batches] = [p["logits"][0] for p in est.predict(_input_fn(X[:20]))]
        assert est.evaluate(_input_fn(X, y))["global_step"] == batches * (1 + 3 * 2)
    np.testing.assert_allclose(preds[1], preds[2], rtol=1e-9, atol=1e-12)


def test_resume_from_model_dir_equals_one_run(tmp_path):
    """Stopping mid-sketch and mid-layer (n_batches_per_layer=2) and continuing with a new
    instance gives the trees of an uninterrupted run."""
    X, y = make_classification(n_samples=300, n_features=4, n_redundant=0, random_state=7)
    kwargs = {"n_batches_per_layer": 2, "n_trees": 3, "max_depth": 2}
    whole = tf.estimator.BoostedTreesClassifier(_columns(4), model_dir=str(tmp_path / "a"),
                                                **kwargs)
    whole.train(_input_fn(X, y, epochs=100, batches=2))
    parts_dir = str(tmp_path / "b")
    stream = _input_fn(X, y, epochs=100, batches=2)()   # each part continues the stream
    for stop in (1, 4, 7, None):
        est = tf.estimator.BoostedTreesClassifier(_columns(4), model_dir=parts_dir, **kwargs)
        est.train(lambda: stream, max_steps=stop)
    fresh = tf.estimator.BoostedTreesClassifier(_columns(4), model_dir=parts_dir, **kwargs)
    got = [p["logits"][0] for p in fresh.predict(_input_fn(X[:30]))]
    want = [p["logits"][0] for p in whole.predict(_input_fn(X[:30]))]
    np.testing.assert_allclose(got, want, rtol=1e-9)
    assert fresh.evaluate(_input_fn(X, y))["global_step"] == 2 * (1 + 3 * 2)
    # a finished ensemble trains no further
    fresh.train(_input_fn(X, y, epochs=100, batches=2))
    assert fresh.evaluate(_input_fn(X, y))["global_step"] == 14


def test_predict_keys_shapes_and_label_vocabulary(tmp_path):
    X, y = make_classification(n_samples=200, n_features=3, n_informative=2, n_redundant=0,
                               random_state=2)
    labels = np.array(["no", "yes"])[y]
    est = tf.estimator.BoostedTreesClassifier(_columns(3), n_batches_per_layer=1, n_trees=2,
                                              max_depth=2, label_vocabulary=["no", "yes"],
                                              model_dir=str(tmp_path))
    est.train(_input_fn(X, labels, epochs=100))
    pred = next(est.predict(_input_fn(X[:3])))
    assert set(pred) == {"logits", "logistic", "probabilities", "class_ids", "classes",
                         "all_class_ids", "all_classes"}
    assert pred["logits"].shape == (1,) and pred["logistic"].shape == (1,)
    assert pred["probabilities"].shape == (2,) and pred["class_ids"].dtype == np.int64
    assert pred["classes"][0] == [b"no", b"yes"][pred["class_ids"][0]]
    assert np.isclose(pred["probabilities"][1], pred["logistic"][0])
    batch = next(est.predict(_input_fn(X[:3]), predict_keys=["class_ids"],
                             yield_single_examples=False))
    assert set(batch) == {"class_ids"} and batch["class_ids"].shape == (3, 1)


def test_indicator_column_and_numpy_input_fn(tmp_path):
    rng = np.random.default_rng(4)
    colors = rng.choice(["red", "green", "blue"], 300)
    noise = rng.normal(size=300)
    y = (colors == "green").astype(np.int64)
    color = tf.feature_column.indicator_column(
        tf.feature_column.categorical_column_with_vocabulary_list(
            "color", ["red", "green", "blue"]))
    cols = [color, tf.feature_column.numeric_column("noise")]
    input_fn = tf.estimator.inputs.numpy_input_fn({"color": colors, "noise": noise}, y,
                                                  batch_size=300, num_epochs=None,
                                                  shuffle=False)
    est = tf.estimator.BoostedTreesClassifier(cols, n_batches_per_layer=1, n_trees=2,
                                              max_depth=1, model_dir=str(tmp_path))
    est.train(input_fn, max_steps=3)
    assert list(est.experimental_feature_importances())[0] == "color"
    eval_fn = tf.estimator.inputs.numpy_input_fn({"color": colors, "noise": noise}, y,
                                                 batch_size=100, shuffle=False)
    assert est.evaluate(eval_fn)["accuracy"] == 1.0


def test_weight_column_acts_like_repeated_rows(tmp_path):
    """With l2 = 0 a weight of 2 grows the trees that a doubled row does (the per-instance
    scale differs by one constant factor, which cancels in -G/H and the split choice)."""
    X, y = make_classification(n_samples=200, n_features=3, n_redundant=0, random_state=6)
    cols = [bucketized_column(tf.feature_column.numeric_column(f"f{i}"),
                              [-1.0, -0.5, 0.0, 0.5, 1.0]) for i in range(3)]
    w = np.where(np.arange(200) < 50, 2.0, 1.0)

    def weighted():
        for _ in range(100):
            yield {**{f"f{i}": X[:, i] for i in range(3)}, "w": w}, y
    dup = np.concatenate([np.arange(200), np.arange(50)])
    kwargs = {"n_batches_per_layer": 1, "n_trees": 3, "max_depth": 2}
    a = tf.estimator.BoostedTreesClassifier(cols, weight_column="w",
                                            model_dir=str(tmp_path / "a"), **kwargs)
    a.train(weighted)
    b = tf.estimator.BoostedTreesClassifier(cols, model_dir=str(tmp_path / "b"), **kwargs)
    b.train(_input_fn(X[dup], y[dup], epochs=100))
    got = [p["logits"][0] for p in a.predict(_input_fn(X[:20]))]
    want = [p["logits"][0] for p in b.predict(_input_fn(X[:20]))]
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("kwargs, error", [
    ({"n_batches_per_layer": 0}, ValueError),
    ({"n_trees": 0}, ValueError),
    ({"max_depth": -1}, ValueError),
    ({"learning_rate": 0.0}, ValueError),
    ({"l2_regularization": -1.0}, ValueError),
    ({"pruning_mode": "late"}, ValueError),
    ({"pruning_mode": "pre"}, ValueError),               # needs tree_complexity > 0
    ({"pruning_mode": "post"}, ValueError),              # needs tree_complexity > 0
    ({"tree_complexity": 0.1}, ValueError),              # no effect without pruning
    ({"quantile_sketch_epsilon": 0.0}, ValueError),
    ({"n_classes": 1}, ValueError),
    ({"label_vocabulary": ["a", "b", "c"]}, ValueError),
    ({"train_in_memory": True, "n_batches_per_layer": 2}, ValueError),
])
def test_bad_arguments(tmp_path, kwargs, error):
    args = {"feature_columns": _columns(2), "n_batches_per_layer": 1,
            "model_dir": str(tmp_path), **kwargs}
    with pytest.raises(error):
        tf.estimator.BoostedTreesClassifier(**args)


def test_bad_columns_labels_and_untrained_use(tmp_path):
    color = tf.feature_column.categorical_column_with_vocabulary_list("c", ["a", "b"])
    with pytest.raises(ValueError, match="indicator_column"):
        tf.estimator.BoostedTreesClassifier([tf.feature_column.embedding_column(color, 2)],
                                            n_batches_per_layer=1)
    with pytest.raises(NotImplementedError, match="label_dimension"):
        tf.estimator.BoostedTreesRegressor(_columns(1), n_batches_per_layer=1,
                                           label_dimension=2)
    with pytest.raises(ValueError, match="sorted"):
        bucketized_column(tf.feature_column.numeric_column("x"), [1.0, 0.0])
    est = tf.estimator.BoostedTreesClassifier(_columns(2), n_batches_per_layer=1,
                                              model_dir=str(tmp_path))
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.evaluate(_input_fn(X, np.zeros(4)))
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.experimental_feature_importances()
    # untrained: zero logits, as TF's initialized ensemble
    assert next(est.predict(_input_fn(X)))["logits"][0] == 0.0
    with pytest.raises(ValueError, match=r"labels must be integers in \[0, 2\)"):
        est.train(_input_fn(X, np.array([0, 1, 2, 1]), epochs=3))


def test_unsplittable_layers_are_retried_until_tfs_attempt_limit(tmp_path):
    """A min_node_weight above the root's (per-instance) hessian stops every split; as TF,
    each layer is retried on new batches until more than 2 * n_trees * max_depth attempts."""
    X, y = make_classification(n_samples=100, n_features=2, n_redundant=0, random_state=8)
    est = tf.estimator.BoostedTreesClassifier(_columns(2), n_batches_per_layer=1, n_trees=2,
                                              max_depth=2, min_node_weight=0.3,
                                              model_dir=str(tmp_path))
    est.train(_input_fn(X, y, epochs=1000))
    assert est.evaluate(_input_fn(X, y))["global_step"] == 1 + 2 * 2 * 2 + 1
    assert next(est.predict(_input_fn(X)))["logits"][0] == 0.0
    # a root hessian of 0.25 (p = 0.5) passes min_node_weight=0.2: depth-1 trees grow
    grown = tf.estimator.BoostedTreesClassifier(_columns(2), n_batches_per_layer=1, n_trees=2,
                                                max_depth=1, min_node_weight=0.2,
                                                model_dir=str(tmp_path / "grown"))
    grown.train(_input_fn(X, y, epochs=1000))
    assert grown.evaluate(_input_fn(X, y))["global_step"] == 1 + 2 * 1


@pytest.mark.parametrize("mode", ["pre", "post"])
def test_pruning_drops_splits_below_tree_complexity(tmp_path, mode):
    X, y = make_classification(n_samples=200, n_features=2, n_redundant=0, random_state=9)
    importances = {}
    for tc in (1e-4, 10.0):
        est = tf.estimator.BoostedTreesClassifier(_columns(2), n_batches_per_layer=1,
                                                  n_trees=1, max_depth=3, pruning_mode=mode,
                                                  tree_complexity=tc,
                                                  model_dir=str(tmp_path / str(tc)))
        est.train(_input_fn(X, y, epochs=100))
        importances[tc] = sum(est.experimental_feature_importances().values())
    assert importances[1e-4] > 0 and importances[10.0] == 0.0
    assert next(est.predict(_input_fn(X)))["logits"][0] == 0.0
    with pytest.raises(ValueError, match="no splits"):
        est.experimental_feature_importances(normalize=True)


def test_post_pruning_keeps_only_positive_gain_or_inner_splits(tmp_path):
    """Post-pruning turns back bottom-up the negative-gain splits whose children are leaves:
    what remains are splits of gain >= 0 or splits above kept splits."""
    from tensorlite.estimator.boosted_trees_grow import post_prune
    tree = {"feature": [0, 1, -1, -1, -1, 0, -1, -1, -1], "threshold": [0] * 9,
            "left": [1, 3, 5, -1, -1, 7, -1, -1, -1],
            "right": [2, 4, 6, -1, -1, 8, -1, -1, -1],
            "value": [[float(i)] for i in range(9)],
            "gain": [-1.0, -0.5, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]}
    tree["feature"][2] = 1                      # node 2 splits into 5 (which splits) and 6
    tree["gain"][2] = -0.2
    post_prune(tree)
    # node 1 (negative, leaf children) goes; node 2 stays (child 5 splits), so the root stays
    assert tree["feature"][:3] == [0, -1, 1] and tree["feature"][5] == 0
    assert tree["value"][1] == [1.0]


def test_center_bias_converges_to_the_prior_logit(tmp_path):
    y = (np.arange(500) % 5 != 0).astype(np.int64)            # 80% positive
    X = np.random.default_rng(1).normal(size=(500, 1))
    est = tf.estimator.BoostedTreesClassifier(_columns(1), n_batches_per_layer=1, n_trees=1,
                                              max_depth=1, center_bias=True,
                                              min_node_weight=10.0, model_dir=str(tmp_path))
    est.train(_input_fn(X, y, epochs=1000))                   # no split can grow
    logit = next(est.predict(_input_fn(X)))["logits"][0]
    assert np.isclose(logit, np.log(4.0), rtol=0.01)


def test_bucketized_column_ids_and_one_hot():
    """TF's buckets: boundaries[i-1] <= x < boundaries[i]; the dense form is one-hot."""
    age = bucketized_column(tf.feature_column.numeric_column("age"), [18.0, 65.0])
    assert age.name == "age_bucketized" and age.num_buckets == 3
    ids = age.bucket_ids({"age": [[10.0], [18.0], [64.9], [65.0]]}).ravel().tolist()
    assert ids == [0, 1, 1, 2]
    dense = tf.feature_column.input_layer({"age": [[10.0], [70.0]]}, [age]).numpy()
    np.testing.assert_array_equal(dense, [[1, 0, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="numeric_column"):
        bucketized_column("age", [1.0])
