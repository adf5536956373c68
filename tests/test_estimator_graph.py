"""The Estimator contract as TensorFlow has it: a TF1 model_fn (tf.compat.v1.layers.dense,
GradientDescentOptimizer.minimize with the global step, tf.compat.v1.metrics) run as a
graph, on y = 3x + 2: loss falls, evaluate, predict, resume after a kill, early stopping,
MirroredStrategy in RunConfig, TF-format checkpoints."""
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf


def model_fn(features, labels, mode, params):
    """Seed 004's shape of model_fn: TF1 layers, TF1 optimizer, TF1 metrics."""
    pred = tf.compat.v1.layers.dense(features["x"], 1, name="linear",
                                     kernel_initializer=params.get("init"))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred}, export_outputs={
            "serving_default": tf.estimator.export.PredictOutput({"y": pred})})
    loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(params["lr"]).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, predictions={"y": pred},
        eval_metric_ops={"mae": tf.compat.v1.metrics.mean_absolute_error(labels, pred),
                         "rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, pred)})


def _data(n=200, seed=0):
    x = np.random.default_rng(seed).uniform(-1, 1, (n, 1)).astype("float32")
    return x, 3 * x + 2


def _train_fn(epochs=None, shuffle=True):
    x, y = _data()
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, num_epochs=epochs,
                                              shuffle=shuffle)


def _eval_fn():
    x, y = _data(100, seed=1)
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=25, shuffle=False)


def _estimator(model_dir, lr=0.1, every=10, strategy=None, init=None):
    cfg = tf.estimator.RunConfig(save_checkpoints_steps=every, train_distribute=strategy)
    return tf.estimator.Estimator(model_fn, model_dir=str(model_dir), config=cfg,
                                  params={"lr": lr, "init": init})


class _Steps(tf.estimator.SessionRunHook):
    """Records every global step the loop ran, and that begin/end were called."""

    def __init__(self):
        self.steps, self.calls = [], []

    def begin(self):
        self.calls.append("begin")
        self.step = tf.compat.v1.train.get_global_step()

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        return tf.estimator.SessionRunArgs(self.step)

    def after_run(self, run_context, run_values):
        self.steps.append(int(run_values.results))

    def end(self, session):
        self.calls.append("end")


def test_train_evaluate_predict_on_linear_problem(tmp_path):
    est = _estimator(tmp_path)
    est.train(_train_fn(), steps=5)
    early = est.evaluate(_eval_fn())
    hook = _Steps()
    est.train(_train_fn(), steps=195, hooks=[hook])
    late = est.evaluate(_eval_fn())
    assert hook.calls == ["begin", "after_create_session", "end"]
    assert hook.steps == list(range(6, 201))
    assert set(late) == {"loss", "mae", "rmse", "global_step"}
    assert early["global_step"] == 5 and late["global_step"] == 200
    assert late["loss"] < early["loss"] / 100 and late["loss"] < 1e-4
    np.testing.assert_allclose(late["rmse"] ** 2, late["loss"], rtol=1e-3)
    np.testing.assert_allclose(est.get_variable_value("linear/kernel"), [[3.0]], atol=1e-2)
    np.testing.assert_allclose(est.get_variable_value("linear/bias"), [2.0], atol=1e-2)
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": np.array([[0.0], [1.0], [-1.0]], "float32")}, shuffle=False)))
    assert [sorted(p) for p in preds] == [["y"]] * 3
    np.testing.assert_allclose([p["y"][0] for p in preds], [2.0, 5.0, -1.0], atol=1e-2)


def test_checkpoints_are_tensorflow_format(tmp_path):
    est = _estimator(tmp_path, every=30)
    est.train(_train_fn(), max_steps=70)
    names = set(os.listdir(tmp_path))
    for step in (30, 60, 70):
        assert {f"model.ckpt-{step}.index",
                f"model.ckpt-{step}.data-00000-of-00001"} <= names
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-70")
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert sorted(reader.get_variable_to_shape_map()) == ["global_step", "linear/bias",
                                                          "linear/kernel"]
    assert reader.get_tensor("global_step") == 70
    # max_steps already reached: nothing runs, the step stays
    est.train(_train_fn(), max_steps=50)
    assert est.evaluate(_eval_fn())["global_step"] == 70


def _train_then_die(model_dir):
    """Run in a child process: trains with checkpoints every 10 steps and SIGKILLs itself
    at step 25, after the step-20 checkpoint and before any later one."""
    class Die(tf.estimator.SessionRunHook):
        def before_run(self, run_context):
            return tf.estimator.SessionRunArgs(tf.compat.v1.train.get_global_step())

        def after_run(self, run_context, run_values):
            if run_values.results == 25:
                os.kill(os.getpid(), signal.SIGKILL)
    _estimator(model_dir).train(_train_fn(), max_steps=100, hooks=[Die()])


def test_resume_after_kill(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = f"import tests.test_estimator_graph as t; t._train_then_die({str(tmp_path)!r})"
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=300,
                          env={**os.environ, "PYTHONPATH": root}, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-20")
    saved = tf.train.load_checkpoint(str(tmp_path)).get_tensor("linear/kernel")
    est = _estimator(tmp_path)
    np.testing.assert_array_equal(est.get_variable_value("linear/kernel"), saved)
    hook = _Steps()
    est.train(_train_fn(), max_steps=40, hooks=[hook])
    assert hook.steps == list(range(21, 41))     # resumed from step 20, not from 0
    assert est.evaluate(_eval_fn())["global_step"] == 40


def test_make_early_stopping_hook_stops_training(tmp_path):
    est = _estimator(tmp_path)
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) >= 3
    hook = tf.compat.v1.estimator.experimental.make_early_stopping_hook(
        est, should_stop, run_every_secs=None, run_every_steps=5)
    est.train(_train_fn(), max_steps=1000, hooks=[hook])
    # checked at steps 1, 6 and 11: the third check stops after step 11
    assert est.evaluate(_eval_fn())["global_step"] == 11
    with pytest.raises(ValueError, match="every_secs or every_steps"):
        tf.estimator.experimental.make_early_stopping_hook(est, should_stop,
                                                           run_every_secs=10,
                                                           run_every_steps=5)


@pytest.mark.parametrize("lr,stops", [(0.0, True), (0.1, False)])
def test_stop_if_no_decrease_hook_reads_eval_events(tmp_path, lr, stops):
    est = _estimator(tmp_path, lr=lr)
    for _ in range(2):          # evaluations at steps 10 and 20, as train_and_evaluate does
        est.train(_train_fn(), steps=10)
        est.evaluate(_eval_fn())
    hook = tf.estimator.experimental.stop_if_no_decrease_hook(
        est, "loss", max_steps_without_decrease=10, run_every_secs=None, run_every_steps=1)
    est.train(_train_fn(), max_steps=60, hooks=[hook])
    # lr 0: the loss at step 20 is not lower than at step 10, so training stops at once
    assert est.evaluate(_eval_fn())["global_step"] == (21 if stops else 60)
    bad = tf.estimator.experimental.stop_if_higher_hook(
        est, "no_such_metric", 1.0, run_every_secs=None, run_every_steps=1)
    with pytest.raises(ValueError, match="no_such_metric is not found"):
        est.train(_train_fn(), steps=1, hooks=[bad])


def test_mirrored_strategy_in_run_config(tmp_path):
    """The graph path runs each batch whole in one Session: for a mean loss that is the
    update MirroredStrategy's replicas make together (estimator.py says how)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    init = tf.compat.v1.constant_initializer(0.5)
    mirrored = _estimator(tmp_path / "m", strategy=strategy, init=init)
    single = _estimator(tmp_path / "s", init=init)
    for est in (mirrored, single):
        est.train(_train_fn(epochs=1, shuffle=False), steps=10)
    a, b = mirrored.evaluate(_eval_fn()), single.evaluate(_eval_fn())
    assert a["global_step"] == b["global_step"] == 10
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    assert a["loss"] < 0.5


def test_graph_errors(tmp_path):
    est = _estimator(tmp_path)
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.evaluate(_eval_fn())

    def bad_metric_fn(features, labels, mode):
        spec = model_fn(features, labels, mode, {"lr": 0.1})
        return tf.estimator.EstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op,
                                          eval_metric_ops={"m": spec.loss})
    bad = tf.estimator.Estimator(bad_metric_fn, model_dir=str(tmp_path / "b"))
    bad.train(_train_fn(), steps=2)
    with pytest.raises(TypeError, match=r"\(value, update_op\) pair"):
        bad.evaluate(_eval_fn())


def _raw_receiver_fn():
    return tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, 1], tf.float32)})


def test_export_saved_model_serves_predictions(tmp_path):
    est = _estimator(tmp_path / "m")
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        est.export_saved_model(str(tmp_path / "export"), _raw_receiver_fn())
    est.train(_train_fn(), steps=150)
    first = est.export_saved_model(str(tmp_path / "export"), _raw_receiver_fn())
    second = est.export_saved_model(str(tmp_path / "export"), _raw_receiver_fn())
    assert isinstance(first, bytes) and first != second      # timestamped, never reused
    assert os.path.basename(first.decode()).isdigit()
    serve = tf.saved_model.load(first.decode()).signatures["serving_default"]
    out = serve(x=tf.constant([[0.0], [2.0]]))
    ours = [p["y"] for p in est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": np.array([[0.0], [2.0]], np.float32)}, shuffle=False))]
    np.testing.assert_allclose(out["y"].numpy(), ours, rtol=1e-6)
    np.testing.assert_allclose(out["y"].numpy(), [[2.0], [8.0]], atol=0.05)


def test_export_of_parsed_features_is_not_implemented(tmp_path):
    est = _estimator(tmp_path)
    est.train(_train_fn(), steps=1)

    def parsing_receiver_fn():
        raw = tf.compat.v1.placeholder(tf.float32, [None, 1], name="raw")
        return tf.estimator.export.ServingInputReceiver({"x": raw * 2.0}, {"raw": raw})
    with pytest.raises(NotImplementedError, match="computed from the receiver tensors"):
        est.export_saved_model(str(tmp_path / "export"), parsing_receiver_fn)


def keras_model_fn(features, labels, mode):
    """A graph model_fn built from Keras layers, with TF1's Adam and metrics."""
    hidden = tf.keras.layers.Dense(8, activation="tanh")(features["x"])
    pred = tf.keras.layers.Dense(1)(hidden)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "mse": tf.compat.v1.metrics.mean_squared_error(labels, pred)})


def test_keras_layers_model_fn_resumes_in_a_new_estimator(tmp_path):
    tf.keras.layers.Dense(1)   # takes the name `dense` in this process, not in a new graph
    est = tf.estimator.Estimator(keras_model_fn, model_dir=str(tmp_path))
    est.train(_train_fn(), steps=10)
    first = est.evaluate(_eval_fn())
    assert {"dense/kernel", "dense_1/kernel"} <= set(est.get_variable_names())
    again = tf.estimator.Estimator(keras_model_fn, model_dir=str(tmp_path))
    assert again.evaluate(_eval_fn())["loss"] == first["loss"]    # same values restored
    again.train(_train_fn(), steps=290)
    last = again.evaluate(_eval_fn())
    assert last["global_step"] == 300 and last["loss"] < first["loss"] / 20
    np.testing.assert_allclose(last["mse"], last["loss"], rtol=1e-5)


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_nan_loss_stops_training(tmp_path):
    est = _estimator(tmp_path, lr=1e20)
    with pytest.raises(tf.estimator.NanLossDuringTrainingError, match="NaN loss"):
        est.train(_train_fn(), steps=50)


def test_save_checkpoints_secs_and_keep_max(tmp_path):
    cfg = tf.estimator.RunConfig(save_checkpoints_secs=0.000001, keep_checkpoint_max=3)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=cfg,
                                 params={"lr": 0.1})
    est.train(_train_fn(), steps=6)
    index = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert index == ["model.ckpt-4.index", "model.ckpt-5.index", "model.ckpt-6.index"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-4", "model.ckpt-5", "model.ckpt-6"]


def test_train_and_evaluate_with_early_stopping(tmp_path):
    est = _estimator(tmp_path, lr=0.0)         # the loss never decreases
    hook = tf.estimator.experimental.stop_if_no_decrease_hook(
        est, "loss", max_steps_without_decrease=20, run_every_secs=None, run_every_steps=1)
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(_train_fn(), max_steps=500, hooks=[hook]),
        tf.estimator.EvalSpec(_eval_fn(), steps=None, throttle_steps=10))
    # evaluations at 10, 20, 30; the check after step 31 sees 30 - 10 >= 20 and stops
    assert metrics["global_step"] == 31 and exports == []
    from tensorlite.estimator import eval_events
    assert est.eval_dir() == str(tmp_path / "eval")
    assert list(eval_events.read(est.eval_dir())) == [10, 20, 30, 31]


class _CountingHook(tf.estimator.SessionRunHook):
    """Makes a variable in begin() (before the Session exists) and bumps it every step."""

    def begin(self):
        self.count = tf.compat.v1.get_variable("hook_steps", initializer=tf.constant(0.0),
                                               trainable=False)
        self.bump = tf.compat.v1.assign_add(self.count, 1.0)

    def before_run(self, run_context):
        return tf.estimator.SessionRunArgs(self.bump)


def test_hook_variables_made_in_begin_are_initialized_and_saved(tmp_path):
    est = _estimator(tmp_path)
    est.train(_train_fn(), steps=7, hooks=[_CountingHook()])
    assert tf.train.load_checkpoint(str(tmp_path)).get_tensor("hook_steps") == 7.0


def test_training_loss_summaries_in_model_dir(tmp_path):
    from tensorlite.estimator import eval_events
    cfg = tf.estimator.RunConfig(save_summary_steps=40)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=cfg,
                                 params={"lr": 0.1})
    est.train(_train_fn(), steps=120)
    losses = eval_events.read(str(tmp_path))
    assert list(losses) == [40, 80, 120] and all(set(v) == {"loss"} for v in losses.values())
    assert losses[120]["loss"] < losses[40]["loss"]


class _Listener(tf.estimator.CheckpointSaverListener):
    """Records the saves; asks to stop after the save at `stop_after`."""

    def __init__(self, stop_after):
        self.events, self.stop_after = [], stop_after

    def begin(self):
        self.events.append("begin")

    def before_save(self, session, global_step_value):
        self.events.append(("before", global_step_value))

    def after_save(self, session, global_step_value):
        self.events.append(("after", global_step_value))
        return global_step_value >= self.stop_after

    def end(self, session, global_step_value):
        self.events.append(("end", global_step_value))


def test_saving_listeners_see_each_save_and_can_stop(tmp_path):
    est = _estimator(tmp_path, every=10)
    listener = _Listener(stop_after=20)
    est.train(_train_fn(), max_steps=100, saving_listeners=[listener])
    assert listener.events == ["begin", ("before", 10), ("after", 10), ("before", 20),
                               ("after", 20), ("end", 20)]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-20")


def test_hooks_on_the_eager_path_are_not_implemented(tmp_path):
    def eager_fn(features, labels, mode):
        pred = tf.keras.layers.Dense(1)(features["x"])
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred},
                                          loss=tf.reduce_mean(tf.square(pred - labels)),
                                          train_op=tf.keras.optimizers.SGD(0.1))
    est = tf.estimator.Estimator(eager_fn, model_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="graph path only"):
        est.train(_train_fn(), steps=2, hooks=[_Steps()])
    est.train(_train_fn(), steps=2)
    assert est.evaluate(_eval_fn())["global_step"] == 2
    with pytest.raises(NotImplementedError, match="Keras-optimizer model_fns cannot be"):
        est.export_saved_model(str(tmp_path / "export"), _raw_receiver_fn())


def test_tf_random_seed_makes_initial_values_repeatable(tmp_path):
    def kernel_after_one_step(name, seed):
        est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / name),
                                     config=tf.estimator.RunConfig(tf_random_seed=seed),
                                     params={"lr": 0.0})
        est.train(_train_fn(shuffle=False), steps=1)
        return est.get_variable_value("linear/kernel")
    try:
        a, b = kernel_after_one_step("a", 7), kernel_after_one_step("b", 7)
        c = kernel_after_one_step("c", 8)
    finally:
        tf.random.set_seed(None)   # the seed is process-wide in tensorlite (graph_model.py)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_warm_start_from_another_model_dir(tmp_path):
    donor = _estimator(tmp_path / "donor")
    donor.train(_train_fn(), steps=100)
    kernel = donor.get_variable_value("linear/kernel")
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "new"),
                                 params={"lr": 0.0}, warm_start_from=str(tmp_path / "donor"))
    est.train(_train_fn(), steps=1)
    np.testing.assert_array_equal(est.get_variable_value("linear/kernel"), kernel)
    assert est.evaluate(_eval_fn())["global_step"] == 1    # the step is not warm-started
    only_bias = tf.estimator.Estimator(
        model_fn, model_dir=str(tmp_path / "bias"), params={"lr": 0.0},
        warm_start_from=tf.estimator.WarmStartSettings(str(tmp_path / "donor"),
                                                       vars_to_warm_start="linear/bias"))
    only_bias.train(_train_fn(), steps=1)
    np.testing.assert_array_equal(only_bias.get_variable_value("linear/bias"),
                                  donor.get_variable_value("linear/bias"))
    assert not np.array_equal(only_bias.get_variable_value("linear/kernel"), kernel)


def test_train_on_empty_input_keeps_the_step(tmp_path):
    est = _estimator(tmp_path)
    est.train(_train_fn(), steps=3)
    empty = tf.estimator.inputs.numpy_input_fn({"x": np.zeros((0, 1), np.float32)},
                                               np.zeros((0, 1), np.float32), shuffle=False)
    again = _estimator(tmp_path)
    again.train(empty, steps=5)
    assert again.evaluate(_eval_fn())["global_step"] == 3
