"""tf.distribute in one process: the default strategy, OneDevice and Mirrored strategies,
collectives, distributed datasets, TF_CONFIG, and Keras fit under MirroredStrategy matching
single-process fit on the global batch step by step."""
import json

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.distribute import tf_config
from tests.distribute_fixtures import WeightRecorder, small_classifier


def test_seed_001_kaggle_snippet_runs_as_written():
    try:
        tpu = tf.distribute.cluster_resolver.TPUClusterResolver()
    except ValueError:
        tpu = None
    assert tpu is None
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile("adam", "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    assert strategy.num_replicas_in_sync == 1
    assert model.distribute_strategy is strategy


def test_get_strategy_inside_scope_and_contexts():
    m = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert not tf.distribute.has_strategy()
    with m.scope():
        assert tf.distribute.get_strategy() is m
        assert tf.distribute.in_cross_replica_context()
        ids = m.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
    assert [int(v) for v in ids.values] == [0, 1]
    assert tf.distribute.get_strategy() is not m


def test_run_all_reduce_and_reduce():
    m = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])

    def fn(x):
        ctx = tf.distribute.get_replica_context()
        mine = x * tf.cast(ctx.replica_id_in_sync_group + 1, tf.float32)
        return ctx.all_reduce(tf.distribute.ReduceOp.SUM, mine), \
            ctx.all_reduce("mean", mine), mine
    summed, mean, mine = m.run(fn, args=(tf.constant(2.0),))
    assert [float(v) for v in summed.values] == [12.0, 12.0, 12.0]
    assert [float(v) for v in mean.values] == [4.0, 4.0, 4.0]
    assert float(m.reduce(tf.distribute.ReduceOp.SUM, mine, axis=None)) == 12.0
    assert float(m.reduce("MEAN", mine, axis=None)) == 4.0
    per = m.run(lambda: tf.constant([1.0, 2.0, 3.0]))
    assert float(m.reduce("MEAN", per, axis=0)) == 2.0
    assert float(m.reduce("SUM", per, axis=0)) == 18.0
    np.testing.assert_array_equal(m.gather(per, axis=0).numpy(), [1, 2, 3] * 3)


def test_replica_failure_propagates_without_hanging():
    m = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

    def fn():
        ctx = tf.distribute.get_replica_context()
        if int(ctx.replica_id_in_sync_group) == 1:
            raise RuntimeError("replica 1 failed")
        return ctx.all_reduce("sum", tf.constant(1.0))
    with pytest.raises(RuntimeError, match="replica 1 failed"):
        m.run(fn)


def test_experimental_distribute_dataset_splits_global_batch():
    m = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    ds = tf.data.Dataset.range(10).batch(5)
    got = [[v.numpy().tolist() for v in b.values] for b in
           m.experimental_distribute_dataset(ds)]
    assert got == [[[0, 1, 2], [3, 4]], [[5, 6, 7], [8, 9]]]


def test_distribute_datasets_from_function():
    m = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    seen = []

    def dataset_fn(ctx):
        seen.append((ctx.num_input_pipelines, ctx.input_pipeline_id,
                     ctx.get_per_replica_batch_size(4)))
        return tf.data.Dataset.range(8).batch(ctx.get_per_replica_batch_size(4))
    out = [[v.numpy().tolist() for v in b.values] for b in
           m.distribute_datasets_from_function(dataset_fn)]
    assert seen == [(1, 0, 2)]
    assert out == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    with pytest.raises(ValueError, match="not divisible"):
        tf.distribute.InputContext(num_replicas_in_sync=3).get_per_replica_batch_size(4)


def test_custom_loop_apply_gradients_sums_over_replicas():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 4)).astype("float32")
    y = rng.normal(size=(12, 1)).astype("float32")

    def train(strategy):
        with strategy.scope():
            w = tf.Variable(np.ones((4, 1), np.float32))
            opt = tf.keras.optimizers.SGD(0.1)

        def step(batch):
            xb, yb = batch
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((tf.matmul(xb, w) - yb) ** 2) / 6.0
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            return loss
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(6)
        for batch in strategy.experimental_distribute_dataset(ds):
            strategy.run(step, args=(batch,))
        return w.numpy(), int(opt.iterations.numpy())
    w1, it1 = train(tf.distribute.get_strategy())
    w2, it2 = train(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    np.testing.assert_allclose(w1, w2, rtol=1e-5, atol=1e-6)
    assert it1 == it2 == 2   # applied once per step, not once per replica


def test_one_device_strategy():
    s = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert s.num_replicas_in_sync == 1
    assert float(s.run(lambda x: x + 1, args=(tf.constant(1.0),))) == 2.0
    assert s.extended.worker_devices == ("/cpu:0",)


def test_bad_inputs():
    with pytest.raises(ValueError, match="duplicate devices"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])
    with pytest.raises(ValueError, match="ReduceOp"):
        tf.distribute.get_strategy().reduce("MAX", tf.constant(1.0), axis=None)
    with pytest.raises(NotImplementedError, match="TPU"):
        tf.distribute.experimental.TPUStrategy()


def test_tf_config_parsing(monkeypatch):
    spec = {"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"],
                        "ps": ["127.0.0.1:4"]}, "task": {"type": "worker", "index": 1}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(spec))
    cfg = tf_config.parse()
    assert (cfg.task_type, cfg.task_id, cfg.num_workers, cfg.is_chief) == ("worker", 1, 3,
                                                                           False)
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert r.cluster_spec().as_dict() == spec["cluster"]
    assert r.master() == "127.0.0.1:3" and r.task_type == "worker"
    assert tf_config.parse("").cluster == {}
    assert tf_config.parse('{"cluster": {"worker": ["a:1"]}}').is_chief
    with pytest.raises(ValueError, match="not valid JSON"):
        tf_config.parse("{cluster")
    with pytest.raises(ValueError, match="out of range"):
        tf_config.parse('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", '
                        '"index": 3}}')
    with pytest.raises(ValueError, match="not a job"):
        tf_config.parse('{"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", '
                        '"index": 0}}')


def _fit(strategy, initial, x, y, **kw):
    scope = strategy.scope() if strategy is not None else tf.distribute.get_strategy().scope()
    with scope:
        model = small_classifier()
    model.set_weights(initial)
    recorder = WeightRecorder()
    hist = model.fit(x, y, callbacks=[recorder], verbose=0, **kw)
    return recorder.steps, hist.history


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_mirrored_fit_matches_single_process_step_by_step(run_eagerly):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(45, 5)).astype("float32")
    y = rng.integers(0, 3, size=45)
    tf.random.set_seed(3)
    probe = tf.keras.Sequential([tf.keras.layers.Dense(6, input_shape=(5,)),
                                 tf.keras.layers.Dense(3)])
    initial = probe.get_weights()
    kw = dict(batch_size=16, epochs=2, shuffle=False)   # 16 = 6+5+5 over 3 replicas; 13 last
    single, h1 = _fit(None, initial, x, y, **kw)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
    if run_eagerly:
        tf.config.run_functions_eagerly(True)
    try:
        mirrored, h2 = _fit(strategy, initial, x, y, **kw)
    finally:
        tf.config.run_functions_eagerly(False)
    assert len(single) == len(mirrored) == 6
    np.testing.assert_allclose(np.stack(single), np.stack(mirrored), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h1["loss"], h2["loss"], rtol=1e-5)
    assert h1["accuracy"] == h2["accuracy"]
    # and it did learn something: the weights moved
    start = np.concatenate([w.ravel() for w in initial])
    assert np.abs(mirrored[-1] - start).max() > 1e-2


class _CustomStep(tf.keras.Model):
    """seed 001's pattern: a subclassed model overriding train_step."""

    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(6, activation="tanh")
        self.out = tf.keras.layers.Dense(3)

    def call(self, x):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data[0], data[1]
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_custom_train_step_under_mirrored_matches_single_process():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(40, 5)).astype("float32")
    y = rng.integers(0, 3, size=40)
    runs = []
    for strategy in (None, tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])):
        scope = strategy.scope() if strategy else tf.distribute.get_strategy().scope()
        with scope:
            model = _CustomStep()
            model.compile(tf.keras.optimizers.SGD(0.3),
                          tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          metrics=["accuracy"])
        model.build((None, 5))
        if not runs:
            initial = model.get_weights()
        model.set_weights(initial)
        recorder = WeightRecorder()
        hist = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
                         callbacks=[recorder])
        runs.append((np.stack(recorder.steps), hist.history, int(model.optimizer.iterations)))
    (w1, h1, it1), (w2, h2, it2) = runs
    np.testing.assert_allclose(w1, w2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h1["loss"], h2["loss"], rtol=1e-5)
    assert h1["accuracy"] == h2["accuracy"]
    assert it1 == it2 == 6      # one update per step, not one per replica


def test_mirrored_fit_on_a_dataset_matches_single_process():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(30, 5)).astype("float32")
    y = rng.integers(0, 3, size=30)
    tf.random.set_seed(4)
    initial = small_classifier().get_weights()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    single, _ = _fit(None, initial, ds, None, epochs=1)
    mirrored, _ = _fit(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), initial, ds,
                       None, epochs=1)
    assert len(single) == len(mirrored) == 4
    np.testing.assert_allclose(np.stack(single), np.stack(mirrored), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,axis", [("SUM", None), ("MEAN", None), ("SUM", 0), ("MEAN", 0)])
def test_strategy_reduce_inside_tf_function_reduces_each_calls_values(op, axis):
    """The custom-training-loop tutorial's distributed_train_step returns
    strategy.reduce(SUM, per_replica_losses) from a tf.function: each call must reduce
    that call's losses, as eager reduce does (not the trace's, baked in)."""
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        v = tf.Variable([1.0, 2.0, 3.0])

    def step(x):
        v.assign_add(x)
        return v * 2.0

    @tf.function
    def distributed_step(x):
        per_replica = strategy.run(step, args=(x,))
        return strategy.reduce(getattr(tf.distribute.ReduceOp, op), per_replica, axis=axis)
    for _ in range(3):
        got = distributed_step(tf.constant([1.0, 1.0, 1.0]))
        expected = strategy.reduce(getattr(tf.distribute.ReduceOp, op), v * 2.0, axis=axis)
        np.testing.assert_allclose(got.numpy(), expected.numpy())
