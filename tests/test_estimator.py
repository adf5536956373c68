"""tf.estimator as seed 004 uses it: DNNClassifier over feature columns with numpy_input_fn,
a custom model_fn under RunConfig(train_distribute=MirroredStrategy) matching single-process
training, checkpoints in model_dir, train_and_evaluate, and the bad-input errors."""
import os

import numpy as np
import pytest

import tensorlite as tf


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype("float32")
    color = rng.choice(["red", "green", "blue"], n)
    y = ((x[:, 0] + (color == "red") * 1.5) > 0.5).astype(np.int64)
    return {"x": x, "color": color}, y


def _columns():
    color = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"])
    return [tf.feature_column.numeric_column("x", shape=(2,)),
            tf.feature_column.embedding_column(color, 2),
            tf.feature_column.indicator_column(color)]


def test_dnn_classifier_with_feature_columns_learns(tmp_path):
    features, y = _data()
    train_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        features, y, batch_size=32, num_epochs=None, shuffle=True)
    eval_fn = tf.estimator.inputs.numpy_input_fn(features, y, batch_size=100, shuffle=False)
    clf = tf.estimator.DNNClassifier(hidden_units=[16, 8], feature_columns=_columns(),
                                     model_dir=str(tmp_path))
    clf.train(train_fn, max_steps=200)
    metrics = clf.evaluate(eval_fn)
    assert metrics["global_step"] == 200
    assert metrics["accuracy"] > 0.9
    preds = list(clf.predict(tf.estimator.inputs.numpy_input_fn(
        {k: v[:5] for k, v in features.items()}, shuffle=False)))
    assert len(preds) == 5 and set(preds[0]) == {  # TF's binary head's prediction keys
        "logits", "logistic", "probabilities", "class_ids", "classes", "all_class_ids",
        "all_classes"}
    np.testing.assert_allclose([p["probabilities"].sum() for p in preds], 1.0, rtol=1e-5)
    # a new estimator on the same model_dir continues from the checkpoint
    again = tf.estimator.DNNClassifier(hidden_units=[16, 8], feature_columns=_columns(),
                                       model_dir=str(tmp_path))
    assert again.evaluate(eval_fn)["accuracy"] == metrics["accuracy"]
    again.train(train_fn, max_steps=200)       # already there: nothing to do
    assert again.evaluate(eval_fn)["global_step"] == 200


def _model_fn(features, labels, mode, params):
    hidden = tf.keras.layers.Dense(8, activation="tanh",
                                   kernel_initializer=tf.keras.initializers.GlorotUniform(1))
    out = tf.keras.layers.Dense(3, kernel_initializer=tf.keras.initializers.GlorotUniform(2))
    logits = out(hidden(features["x"]))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
        labels, logits, from_logits=True))
    return tf.estimator.EstimatorSpec(mode, loss=loss,
                                      train_op=tf.keras.optimizers.SGD(params["lr"]))


def test_train_distribute_mirrored_matches_single_process(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(90, 4)).astype("float32")
    y = rng.integers(0, 3, 90)
    input_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, shuffle=False)
    results = []
    for strategy in (None, tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])):
        est = tf.estimator.Estimator(
            _model_fn, model_dir=str(tmp_path / str(strategy is None)), params={"lr": 0.5},
            config=tf.estimator.RunConfig(train_distribute=strategy))
        est.train(input_fn)
        results.append([est.get_variable_value(n) for n in est.get_variable_names()])
        assert est.evaluate(input_fn)["global_step"] == 5
    single, mirrored = results
    assert len(single) == len(mirrored) == 4     # kernels and biases, in creation order
    for a, b in zip(single, mirrored):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_train_and_evaluate():
    features, y = _data(200, seed=1)
    est = tf.estimator.DNNClassifier(hidden_units=[8], feature_columns=_columns()[:2],
                                     optimizer="Adam")
    train_spec = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn(
        features, y, batch_size=20, num_epochs=None, shuffle=True), max_steps=60)
    eval_spec = tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn(
        features, y, batch_size=50, shuffle=False), steps=None, throttle_steps=30)
    metrics, exports = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    assert metrics["global_step"] == 60 and exports == []
    assert os.path.exists(os.path.join(est.model_dir, "model.ckpt-60.npz"))


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="shuffle must be provided"):
        tf.estimator.inputs.numpy_input_fn({"x": np.ones(3)}, np.ones(3))
    with pytest.raises(ValueError, match="same length"):
        tf.estimator.inputs.numpy_input_fn({"x": np.ones(3)}, np.ones(4), shuffle=False)
    with pytest.raises(ValueError, match="needs `loss` and `train_op`"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    fn = tf.estimator.inputs.numpy_input_fn({"x": np.ones((4, 4), np.float32)},
                                            np.zeros(4), shuffle=False)
    with pytest.raises(ValueError, match="both steps and max_steps"):
        est.train(fn, steps=1, max_steps=2)
    with pytest.raises(ValueError, match="DenseColumn"):
        tf.feature_column.input_layer({"c": [["a"]]}, [
            tf.feature_column.categorical_column_with_vocabulary_list("c", ["a"])])
    with open(tmp_path / "checkpoint", "w") as f:
        f.write("../../etc/passwd")
    with pytest.raises(ValueError, match="not a checkpoint name"):
        est.latest_checkpoint()
