"""TF's canned estimators over feature columns (Linear, DNN and DNNLinearCombined classifiers
and regressors) on synthetic scikit-learn data, judged against scikit-learn's models on the
same held-out split; their prediction dicts and errors as TF's; and seed 004's
`hub.text_embedding_column` + `numpy_input_fn` + `DNNClassifier(optimizer=
tf.train.AdagradOptimizer(learning_rate=0.003))` with a local text-embedding Hub module
(tests/fixtures/hub_text_module, written by real TensorFlow)."""
import numpy as np
import pytest

import tensorlite as tf
import tensorlite.hub as hub
from tests.test_hub_text import EXPECTED, MODULE, SENTENCES, corpus

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.metrics import (average_precision_score, precision_score,  # noqa: E402
                             r2_score, recall_score, roc_auc_score)


def _split(x, y, n_train):
    return x[:n_train].astype(np.float32), y[:n_train], x[n_train:].astype(np.float32), \
        y[n_train:]


def _fns(xt, yt, xe, ye):
    train = tf.estimator.inputs.numpy_input_fn({"x": xt}, yt, batch_size=100,
                                               num_epochs=None, shuffle=True)
    evaluate = tf.estimator.inputs.numpy_input_fn({"x": xe}, ye, batch_size=100,
                                                  shuffle=False)
    return train, evaluate


def _predict(est, xe, key):
    fn = tf.estimator.inputs.numpy_input_fn({"x": xe}, batch_size=100, shuffle=False)
    return np.stack([p[key] for p in est.predict(fn)])


@pytest.fixture(scope="module")
def binary():
    x, y = make_classification(1200, 10, n_informative=6, random_state=0)
    return _split(x, y, 1000)


def test_linear_classifier_matches_logistic_regression(binary, tmp_path):
    tf.random.set_seed(0)
    xt, yt, xe, ye = binary
    sk = LogisticRegression().fit(xt, yt).score(xe, ye)
    cols = [tf.feature_column.numeric_column("x", shape=(10,))]
    est = tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path))
    train, evaluate = _fns(xt, yt, xe, ye)
    est.train(train, steps=400)
    metrics = est.evaluate(evaluate)
    assert abs(metrics["accuracy"] - sk) <= 0.03, (metrics, sk)
    assert metrics["global_step"] == 400
    assert set(metrics) == {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                            "average_loss", "loss", "label/mean", "precision",
                            "prediction/mean", "recall", "global_step"}
    assert metrics["label/mean"] == pytest.approx(np.mean(ye), abs=1e-6)
    assert metrics["accuracy_baseline"] == pytest.approx(max(np.mean(ye), 1 - np.mean(ye)))
    ids = _predict(est, xe, "class_ids").reshape(-1)
    scores = _predict(est, xe, "logistic").reshape(-1)
    assert np.mean(ids == ye) == pytest.approx(metrics["accuracy"], abs=1e-6)
    # the dataset-wide metrics over two eval batches are scikit-learn's over all of them
    # (the AUCs up to TF's 200-threshold approximation)
    assert metrics["auc"] == pytest.approx(roc_auc_score(ye, scores), abs=5e-3)
    assert metrics["auc_precision_recall"] == pytest.approx(
        average_precision_score(ye, scores), abs=2e-2)
    assert metrics["precision"] == pytest.approx(precision_score(ye, ids), abs=1e-6)
    assert metrics["recall"] == pytest.approx(recall_score(ye, ids), abs=1e-6)
    # a new estimator restores from model_dir on its first batch: the same metrics
    again = tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path)).evaluate(evaluate)
    assert {k: pytest.approx(v, abs=1e-6) for k, v in metrics.items()} == again
    from tensorlite.estimator import eval_events
    assert eval_events.read(est.eval_dir())[400]["auc"] == \
        pytest.approx(metrics["auc"], abs=1e-6)


@pytest.mark.parametrize("kind", ["dnn", "combined"])
def test_dnn_and_wide_deep_classifiers_reach_sklearn_accuracy(binary, kind, tmp_path):
    tf.random.set_seed(1)
    xt, yt, xe, ye = binary
    sk = LogisticRegression().fit(xt, yt).score(xe, ye)
    cols = [tf.feature_column.numeric_column("x", shape=(10,))]
    if kind == "dnn":
        est = tf.estimator.DNNClassifier(hidden_units=[32, 16], feature_columns=cols,
                                         model_dir=str(tmp_path))
    else:
        est = tf.estimator.DNNLinearCombinedClassifier(
            model_dir=str(tmp_path), linear_feature_columns=cols, dnn_feature_columns=cols,
            dnn_hidden_units=[32, 16])
    train, evaluate = _fns(xt, yt, xe, ye)
    est.train(train, steps=400)
    assert est.evaluate(evaluate)["accuracy"] >= sk - 0.03


def test_wide_deep_trains_each_part_with_its_own_optimizer(binary, tmp_path):
    """linear_optimizer only moves the linear weights: with the DNN's learning rate 0 the
    DNN's weights keep their initial values while the (zero-initialized) linear ones move."""
    xt, yt, xe, ye = binary
    cols = [tf.feature_column.numeric_column("x", shape=(10,))]
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=cols, dnn_feature_columns=cols,
        dnn_hidden_units=[4], dnn_optimizer=tf.keras.optimizers.SGD(0.0))
    train, _ = _fns(xt, yt, xe, ye)
    est.train(train, steps=1)
    before = {n: est.get_variable_value(n).copy() for n in est.get_variable_names()}
    est.train(train, steps=20)
    moved = {n for n in before if not np.array_equal(before[n], est.get_variable_value(n))}
    assert moved == {"linear/linear_model/kernel:0", "linear/linear_model/bias:0"}
    assert set(before) - moved == {"dnn/hiddenlayer_0/kernel:0", "dnn/hiddenlayer_0/bias:0",
                                   "dnn/logits/kernel:0", "dnn/logits/bias:0"}


def test_multiclass_with_label_vocabulary(tmp_path):
    tf.random.set_seed(2)
    x, y = make_classification(1200, 8, n_informative=6, n_classes=3, random_state=3)
    names = np.array(["cat", "dog", "eel"])
    xt, yt, xe, ye = _split(x, y, 1000)
    sk = LogisticRegression().fit(xt, yt).score(xe, ye)
    est = tf.estimator.DNNClassifier(
        hidden_units=[32], n_classes=3, label_vocabulary=list(names), model_dir=str(tmp_path),
        feature_columns=[tf.feature_column.numeric_column("x", shape=(8,))])
    train, evaluate = _fns(xt, names[yt], xe, names[ye])
    est.train(train, steps=400)
    metrics = est.evaluate(evaluate)
    assert metrics["accuracy"] >= sk - 0.03
    assert set(metrics) == {"accuracy", "average_loss", "loss", "global_step"}
    first = next(iter(est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": xe[:4]}, shuffle=False))))
    assert set(first) == {"logits", "probabilities", "class_ids", "classes", "all_class_ids",
                          "all_classes"}
    assert first["logits"].shape == first["probabilities"].shape == (3,)
    assert first["class_ids"].shape == first["classes"].shape == (1,)
    assert first["classes"][0] == names[first["class_ids"][0]].encode()
    assert list(first["all_classes"]) == [b"cat", b"dog", b"eel"]
    assert first["probabilities"].sum() == pytest.approx(1.0, abs=1e-5)


def test_binary_prediction_keys_and_shapes(binary, tmp_path):
    xt, yt, xe, ye = binary
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", shape=(10,))],
                                        model_dir=str(tmp_path))
    est.train(_fns(xt, yt, xe, ye)[0], steps=5)
    batch = next(iter(est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": xe[:7]}, shuffle=False), yield_single_examples=False)))
    assert {k: v.shape for k, v in batch.items()} == {
        "logits": (7, 1), "logistic": (7, 1), "probabilities": (7, 2), "class_ids": (7, 1),
        "classes": (7, 1), "all_class_ids": (7, 2), "all_classes": (7, 2)}
    np.testing.assert_allclose(batch["logistic"][:, 0], batch["probabilities"][:, 1],
                               atol=1e-6)
    np.testing.assert_allclose(batch["logistic"], 1 / (1 + np.exp(-batch["logits"])),
                               atol=1e-5)
    assert set(batch["classes"].reshape(-1)) <= {b"0", b"1"}


@pytest.mark.parametrize("name", ["LinearRegressor", "DNNRegressor",
                                  "DNNLinearCombinedRegressor"])
def test_regressors_match_linear_regression_r2(name, tmp_path):
    tf.random.set_seed(3)
    x, y = make_regression(1200, 6, n_informative=4, noise=10.0, random_state=4)
    y = (y / y.std()).astype(np.float32)
    xt, yt, xe, ye = _split(x, y, 1000)
    sk = r2_score(ye, LinearRegression().fit(xt, yt).predict(xe))
    cols = [tf.feature_column.numeric_column("x", shape=(6,))]
    if name == "LinearRegressor":
        est = tf.estimator.LinearRegressor(cols, model_dir=str(tmp_path))
    elif name == "DNNRegressor":
        est = tf.estimator.DNNRegressor([32], cols, model_dir=str(tmp_path))
    else:
        est = tf.estimator.DNNLinearCombinedRegressor(
            model_dir=str(tmp_path), linear_feature_columns=cols, dnn_feature_columns=cols,
            dnn_hidden_units=[32])
    train, evaluate = _fns(xt, yt, xe, ye)
    est.train(train, steps=500)
    pred = _predict(est, xe, "predictions")
    assert pred.shape == (len(xe), 1)
    assert r2_score(ye, pred[:, 0]) >= sk - 0.03, (r2_score(ye, pred[:, 0]), sk)
    metrics = est.evaluate(evaluate)
    assert set(metrics) == {"average_loss", "loss", "label/mean", "prediction/mean",
                            "global_step"}
    assert metrics["average_loss"] == pytest.approx(np.mean((pred[:, 0] - ye) ** 2),
                                                    rel=1e-4)


def test_linear_classifier_on_pandas_with_a_categorical_column(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    color = rng.choice(["red", "green", "blue"], size=600)
    size = rng.normal(size=600).astype(np.float32)
    label = ((color == "red") ^ (size > 0.5)).astype(np.int64)
    df = pd.DataFrame({"color": color, "size": size})
    cols = [tf.feature_column.numeric_column("size"),
            tf.feature_column.categorical_column_with_vocabulary_list(
                "color", ["red", "green", "blue"])]
    est = tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.pandas_input_fn(df, pd.Series(label), num_epochs=None,
                                                  shuffle=True, batch_size=64), steps=300)
    xt = np.stack([size, color == "red"], axis=1)
    sk = LogisticRegression().fit(xt, label).score(xt, label)
    metrics = est.evaluate(tf.estimator.inputs.pandas_input_fn(df, pd.Series(label),
                                                               shuffle=False))
    assert abs(metrics["accuracy"] - sk) <= 0.03
    with pytest.raises(ValueError, match="mismatched"):
        tf.estimator.inputs.pandas_input_fn(df, pd.Series(label, index=df.index + 1),
                                            shuffle=False)
    with pytest.raises(ValueError, match="shuffle must be provided"):
        tf.estimator.inputs.pandas_input_fn(df, pd.Series(label))


def test_text_embedding_column_gives_the_modules_embeddings():
    column = hub.text_embedding_column(key="sentence", module_spec=MODULE)
    dense = tf.feature_column.input_layer({"sentence": np.array(SENTENCES)}, [column])
    np.testing.assert_allclose(dense.numpy(), EXPECTED, atol=1e-6)


def test_seed_004_text_embedding_dnn_classifier(tmp_path):
    """Seed 004's snippet, with the local module instead of tfhub.dev's nnlm-en-dim128."""
    tf.random.set_seed(4)
    train_x, train_y = corpus(600, seed=1)
    test_x, test_y = corpus(200, seed=2)
    embedded_text_feature_column = hub.text_embedding_column(key="sentence",
                                                             module_spec=MODULE)
    estimator = tf.estimator.DNNClassifier(
        hidden_units=[500, 100], feature_columns=[embedded_text_feature_column], n_classes=2,
        optimizer=tf.train.AdagradOptimizer(learning_rate=0.003), model_dir=str(tmp_path))
    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        {"sentence": train_x}, train_y, shuffle=True, num_epochs=None)
    eval_fn = tf.estimator.inputs.numpy_input_fn({"sentence": test_x}, test_y, shuffle=False)
    estimator.train(input_fn=train_input_fn, steps=1)
    start = estimator.evaluate(eval_fn)
    estimator.train(input_fn=train_input_fn, steps=600)
    end = estimator.evaluate(eval_fn)
    # the seed's small Adagrad rate learns slowly (0.69 -> about 0.65 in 600 steps here)
    assert end["loss"] < start["loss"] - 0.02, (start, end)
    assert end["accuracy"] > 0.7, end
    preds = list(estimator.predict(tf.estimator.inputs.numpy_input_fn(
        {"sentence": np.array(["a truly wonderful, moving story", "awful, dull and boring"])},
        shuffle=False)))
    assert [p["class_ids"][0] for p in preds] == [1, 0]


def test_text_embedding_column_predicts_before_training(tmp_path):
    """The module loads outside the Estimator's variable store: predicting first (no graph
    probe) and training after keep the DNN's variables only, and the module unchanged."""
    column = hub.text_embedding_column(key="sentence", module_spec=MODULE)
    x, y = corpus(64, seed=3)
    est = tf.estimator.DNNClassifier([5], [column], model_dir=str(tmp_path))
    fn = tf.estimator.inputs.numpy_input_fn({"sentence": x}, shuffle=False)
    assert len(list(est.predict(fn))) == 64
    est.train(tf.estimator.inputs.numpy_input_fn({"sentence": x}, y, shuffle=True,
                                                 num_epochs=None), steps=3)
    assert sorted(est.get_variable_value(n).shape for n in est.get_variable_names()) == \
        [(1,), (5,), (5, 1), (16, 5)]
    dense = tf.feature_column.input_layer({"sentence": np.array(SENTENCES)}, [column])
    np.testing.assert_allclose(dense.numpy(), EXPECTED, atol=1e-6)


def test_tf1_adagrad_becomes_the_same_keras_update():
    from tensorlite.estimator.canned import resolve_optimizer
    opt = resolve_optimizer(tf.compat.v1.train.AdagradOptimizer(0.5), 0.05, "test")
    w = tf.Variable(1.0)
    opt.apply_gradients([(tf.constant(2.0), w)])
    # TF1: accum = 0.1 + 2^2; w -= 0.5 * 2 / sqrt(accum)
    assert float(w.numpy()) == pytest.approx(1 - 0.5 * 2 / np.sqrt(4.1), abs=1e-6)
    assert tf.train.AdagradOptimizer is tf.compat.v1.train.AdagradOptimizer


def test_tf1_adagrad_in_a_graph_applies_tf1s_rule():
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.constant(1.0))
        train = tf.train.AdagradOptimizer(0.5).minimize(w * w)
        with tf.compat.v1.Session() as s:
            s.run(tf.compat.v1.global_variables_initializer())
            s.run(train)
            first = s.run(w)
            s.run(train)
            second = s.run(w)
    acc = 0.1 + 2.0 ** 2
    expect1 = 1 - 0.5 * 2 / np.sqrt(acc)
    acc += (2 * expect1) ** 2
    assert first == pytest.approx(expect1, abs=1e-6)
    assert second == pytest.approx(expect1 - 0.5 * 2 * expect1 / np.sqrt(acc), abs=1e-6)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_bad_arguments(binary, tmp_path):
    cols = [tf.feature_column.numeric_column("x", shape=(10,))]
    with pytest.raises(ValueError, match="n_classes"):
        tf.estimator.LinearClassifier(cols, n_classes=1)
    with pytest.raises(ValueError, match="feature_columns"):
        tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=[])
    with pytest.raises(ValueError, match="hidden_units"):
        tf.estimator.DNNRegressor(hidden_units=[0], feature_columns=cols)
    with pytest.raises(ValueError, match="label_vocabulary"):
        tf.estimator.LinearClassifier(cols, n_classes=3, label_vocabulary=["a", "b"])
    with pytest.raises(ValueError, match="either linear_feature_columns"):
        tf.estimator.DNNLinearCombinedClassifier()
    with pytest.raises(ValueError, match="label_dimension"):
        tf.estimator.LinearRegressor(cols, label_dimension=0)
    with pytest.raises(ValueError, match="weight_column must be"):
        tf.estimator.LinearClassifier(cols, weight_column=3)
    with pytest.raises(NotImplementedError, match="batch_norm"):
        tf.estimator.DNNClassifier([4], cols, batch_norm=True)
    with pytest.raises(NotImplementedError, match="trainable=True"):
        hub.text_embedding_column("sentence", MODULE, trainable=True)
    xt, yt, xe, ye = binary
    with pytest.raises(ValueError, match="unknown optimizer name"):
        tf.estimator.DNNClassifier([4], cols, optimizer="NoSuchOpt",
                                   model_dir=str(tmp_path / "a")).train(
            _fns(xt, yt, xe, ye)[0], steps=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="n_classes=2"):
        tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path / "b")).train(
            _fns(xt, yt + 1, xe, ye)[0], steps=1)
    with pytest.raises(ValueError, match="label_vocabulary for string labels"):
        tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path / "c")).train(
            _fns(xt, np.where(yt, "y", "n"), xe, ye)[0], steps=1)


def test_two_dimensional_regression_labels(tmp_path):
    tf.random.set_seed(5)
    x, y = make_regression(800, 4, n_targets=2, noise=5.0, random_state=6)
    y = (y / y.std(axis=0)).astype(np.float32)
    xt, yt, xe, ye = _split(x, y, 600)
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x", shape=(4,))],
                                       label_dimension=2, model_dir=str(tmp_path))
    est.train(_fns(xt, yt, xe, ye)[0], steps=400)
    pred = _predict(est, xe, "predictions")
    assert pred.shape == (len(xe), 2)
    sk = r2_score(ye, LinearRegression().fit(xt, yt).predict(xe))
    assert r2_score(ye, pred) >= sk - 0.03


def test_wide_deep_continues_from_its_checkpoint(binary, tmp_path):
    xt, yt, xe, ye = binary
    cols = [tf.feature_column.numeric_column("x", shape=(10,))]

    def make():
        return tf.estimator.DNNLinearCombinedClassifier(
            model_dir=str(tmp_path), linear_feature_columns=cols, dnn_feature_columns=cols,
            dnn_hidden_units=[8])
    train, evaluate = _fns(xt, yt, xe, ye)
    first = make().train(train, steps=50).evaluate(evaluate)
    again = make()
    assert again.evaluate(evaluate)["auc"] == pytest.approx(first["auc"], abs=1e-6)
    assert again.train(train, steps=30).evaluate(evaluate)["global_step"] == 80


def test_unimplemented_loss_reduction_fails_loudly():
    cols = [tf.feature_column.numeric_column("x")]
    with pytest.raises(NotImplementedError, match="loss_reduction"):
        tf.estimator.LinearClassifier(cols, loss_reduction=tf.keras.losses.Reduction.SUM)
    tf.estimator.DNNRegressor([2], cols, loss_reduction="sum_over_batch_size")


def test_numpy_input_fn_array_and_dict_forms():
    fn = tf.estimator.inputs.numpy_input_fn(np.arange(4.0), np.arange(4), batch_size=3,
                                            shuffle=False)
    assert [(f.numpy().tolist(), l.numpy().tolist()) for f, l in fn()] == \
        [([0.0, 1.0, 2.0], [0, 1, 2]), ([3.0], [3])]
    fn = tf.estimator.inputs.numpy_input_fn({"a": np.arange(3.0)}, {"l": -np.arange(3)},
                                            batch_size=2, num_epochs=2, shuffle=False)
    assert [l["l"].numpy().tolist() for _, l in fn()] == [[0, -1], [-2, 0], [-1, -2]]
    with pytest.raises(ValueError, match="duplicate keys"):
        tf.estimator.inputs.numpy_input_fn({"a": np.ones(3)}, {"a": np.ones(3)},
                                           shuffle=False)
    with pytest.raises(ValueError, match=r"same length.*'y': 4"):
        tf.estimator.inputs.numpy_input_fn(np.ones(3), np.ones(4), shuffle=False)
    with pytest.raises(ValueError, match="shuffle must be provided"):
        tf.estimator.inputs.numpy_input_fn(np.ones(3), shuffle="yes")


def test_optimizer_forms_tf_accepts():
    from tensorlite.estimator.canned import resolve_optimizer
    adagrad = resolve_optimizer("Adagrad", 0.05, "test")
    assert type(adagrad).__name__ == "Adagrad"
    assert float(np.asarray(adagrad.learning_rate)) == pytest.approx(0.05)
    assert type(resolve_optimizer("RMSProp", 0.05, "test")).__name__ == "RMSprop"
    sgd = tf.keras.optimizers.SGD(0.1)
    assert resolve_optimizer(sgd, 0.05, "test") is sgd
    assert resolve_optimizer(lambda: sgd, 0.05, "test") is sgd
    assert type(resolve_optimizer(tf.keras.optimizers.Adam, 0.05, "test")).__name__ == "Adam"
    momentum = resolve_optimizer(tf.compat.v1.train.MomentumOptimizer(0.1, 0.9), 0.05, "t")
    assert type(momentum).__name__ == "SGD"
    with pytest.raises(ValueError, match="optimizer must be a name"):
        resolve_optimizer(3, 0.05, "test")


def test_weight_column_weighs_training_and_metrics(binary, tmp_path):
    """Copies of the training set with flipped labels and weight 0 change nothing: the
    classifier still reaches scikit-learn's accuracy; evaluation metrics are weighted as
    scikit-learn's with sample_weight."""
    tf.random.set_seed(6)
    xt, yt, xe, ye = binary
    sk = LogisticRegression().fit(xt, yt).score(xe, ye)
    x2, y2 = np.concatenate([xt, xt]), np.concatenate([yt, 1 - yt])
    w2 = np.concatenate([np.ones(len(yt)), np.zeros(len(yt))]).astype(np.float32)
    est = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=(10,))], weight_column="w",
        model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x2, "w": w2}, y2, batch_size=100,
                                                 num_epochs=None, shuffle=True), steps=400)
    we = np.random.default_rng(7).uniform(0.0, 3.0, len(ye)).astype(np.float32)
    metrics = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"x": xe, "w": we}, ye, batch_size=64, shuffle=False))
    ids = _predict(est, xe, "class_ids").reshape(-1)
    scores = _predict(est, xe, "logistic").reshape(-1)
    assert np.mean(ids == ye) >= sk - 0.03
    assert metrics["accuracy"] == pytest.approx(np.average(ids == ye, weights=we), abs=1e-5)
    assert metrics["label/mean"] == pytest.approx(np.average(ye, weights=we), abs=1e-5)
    assert metrics["precision"] == pytest.approx(
        precision_score(ye, ids, sample_weight=we), abs=1e-5)
    assert metrics["recall"] == pytest.approx(recall_score(ye, ids, sample_weight=we),
                                              abs=1e-5)
    assert metrics["auc"] == pytest.approx(roc_auc_score(ye, scores, sample_weight=we),
                                           abs=5e-3)
    p = np.clip(scores, 1e-7, 1 - 1e-7)
    log_loss = -(ye * np.log(p) + (1 - ye) * np.log(1 - p))
    assert metrics["average_loss"] == pytest.approx(np.average(log_loss, weights=we),
                                                    rel=1e-4)


def test_regressor_weight_column_as_numeric_column(tmp_path):
    x, y = make_regression(300, 3, noise=1.0, random_state=8)
    x, y = x.astype(np.float32), (y / y.std()).astype(np.float32)
    w = np.random.default_rng(9).uniform(0.5, 2.0, len(y)).astype(np.float32)
    est = tf.estimator.DNNRegressor([8], [tf.feature_column.numeric_column("x", shape=(3,))],
                                    weight_column=tf.feature_column.numeric_column("w"),
                                    model_dir=str(tmp_path))
    fn = tf.estimator.inputs.numpy_input_fn({"x": x, "w": w}, y, batch_size=50,
                                            shuffle=False)
    est.train(fn, steps=6)
    metrics = est.evaluate(fn)
    pred = _predict(est, x, "predictions")[:, 0]
    assert metrics["average_loss"] == pytest.approx(np.average((pred - y) ** 2, weights=w),
                                                    rel=1e-4)
    assert metrics["prediction/mean"] == pytest.approx(np.average(pred, weights=w), rel=1e-4)
    assert metrics["label/mean"] == pytest.approx(np.average(y, weights=w), abs=1e-5)


def test_bucketized_column_is_tf_feature_column_and_one_hot_per_bucket():
    age = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("age"),
                                              [18.0, 65.0])
    dense = tf.feature_column.input_layer({"age": [[10.0], [30.0], [70.0]]}, [age])
    assert dense.numpy().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    with pytest.raises(ValueError, match="sorted"):
        tf.feature_column.bucketized_column(tf.feature_column.numeric_column("a"), [2.0, 1.0])
