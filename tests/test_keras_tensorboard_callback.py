"""tf.keras.callbacks.TensorBoard: event files written during fit, read back with TensorBoard's
own EventAccumulator."""
import os
import warnings

import numpy as np
import pytest

import tensorlite as tf
from tests.test_summary import _accumulator

pytest.importorskip("google.protobuf")


def _scalars(acc, tag):
    events = acc.Tensors(tag)
    return [e.step for e in events], [float(tf.make_ndarray(e.tensor_proto))
                                      if hasattr(tf, "make_ndarray") else
                                      _proto_float(e.tensor_proto) for e in events]


def _proto_float(proto):
    if proto.float_val:
        return float(proto.float_val[0])
    return float(np.frombuffer(proto.tensor_content, dtype=np.float32)[0])


def _data(n=20, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
    return x, y


def _model():
    tf.random.set_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("tb")
    x, y = _data()
    xv, yv = _data(8, seed=1)
    model = _model()
    cb = tf.keras.callbacks.TensorBoard(log_dir=str(logdir), histogram_freq=1,
                                        update_freq="batch")
    history = model.fit(x, y, batch_size=5, epochs=3, verbose=0, validation_data=(xv, yv),
                        callbacks=[cb])
    return logdir, model, history, cb


def test_writes_train_and_validation_dirs(run):
    logdir, _, _, cb = run
    assert sorted(os.listdir(logdir)) == ["train", "validation"]
    assert cb._writers == {}  # closed on train end


def test_epoch_scalars_match_history(run):
    logdir, _, history, _ = run
    acc = _accumulator(logdir / "train")
    for metric in ("loss", "accuracy"):
        steps, values = _scalars(acc, "epoch_" + metric)
        assert steps == [0, 1, 2]
        np.testing.assert_allclose(values, history.history[metric], rtol=1e-6, atol=1e-7)
    assert "epoch_val_loss" not in acc.Tags()["tensors"]


def test_validation_scalars_strip_prefix(run):
    logdir, _, history, _ = run
    acc = _accumulator(logdir / "validation")
    tags = acc.Tags()["tensors"]
    assert "epoch_loss" in tags and "epoch_accuracy" in tags
    assert not any(t.startswith("epoch_val_") for t in tags)
    steps, values = _scalars(acc, "epoch_loss")
    assert steps == [0, 1, 2]
    np.testing.assert_allclose(values, history.history["val_loss"], rtol=1e-6, atol=1e-7)
    steps, _ = _scalars(acc, "evaluation_loss_vs_iterations")
    assert steps == [4, 8, 12]


def test_batch_scalars_every_batch(run):
    logdir, _, _, _ = run
    acc = _accumulator(logdir / "train")
    steps, values = _scalars(acc, "batch_loss")
    assert steps == list(range(1, 13))  # 3 epochs x 4 batches, global counter
    assert all(np.isfinite(values))


def test_learning_rate_scalar(run):
    logdir, _, _, _ = run
    steps, values = _scalars(_accumulator(logdir / "train"), "epoch_learning_rate")
    assert steps == [0, 1, 2]
    np.testing.assert_allclose(values, 0.1, rtol=1e-6)


def test_histogram_per_weight(run):
    logdir, model, _, _ = run
    acc = _accumulator(logdir / "train")
    tags = acc.Tags()["tensors"]
    names = [w.name[:-2] for layer in model.layers for w in layer.weights]
    assert len(names) == 4
    for name in names:
        assert name in tags
        events = acc.Tensors(name)
        assert [e.step for e in events] == [0, 1, 2]
        assert events[0].tensor_proto.tensor_shape.dim[1].size == 3
    # the last histogram counts every element of the final kernel
    kernel = model.layers[0].weights[0]
    last = acc.Tensors(kernel.name[:-2])[-1].tensor_proto
    counts = np.frombuffer(last.tensor_content, dtype=np.float64).reshape(-1, 3)[:, 2] \
        if last.tensor_content else np.asarray(last.double_val).reshape(-1, 3)[:, 2]
    assert counts.sum() == kernel.numpy().size


def test_update_freq_int_and_epoch(tmp_path):
    x, y = _data()
    for freq, expected in ((3, [3, 6]), ("epoch", [])):
        logdir = tmp_path / str(freq)
        _model().fit(x, y, batch_size=5, epochs=2, verbose=0,
                     callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(logdir),
                                                               update_freq=freq)])
        acc = _accumulator(logdir / "train")
        tags = acc.Tags()["tensors"]
        steps = [e.step for e in acc.Tensors("batch_loss")] if "batch_loss" in tags else []
        assert steps == expected
        assert not os.path.exists(logdir / "validation")
        assert not any(t.startswith("dense") for t in tags)  # histogram_freq=0


def test_histogram_freq_two(tmp_path):
    x, y = _data()
    model = _model()
    model.fit(x, y, epochs=3, verbose=0,
              callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path),
                                                        histogram_freq=2, write_images=True)])
    acc = _accumulator(tmp_path / "train")
    name = model.layers[0].weights[0].name[:-2]
    assert [e.step for e in acc.Tensors(name)] == [0, 2]
    assert [e.step for e in acc.Tensors(name + "/image")] == [0, 2]


def _profile(log_dir):
    from tensorlite import profiler  # noqa: PLC0415
    runs = profiler.runs(str(log_dir))
    return profiler.load(runs[-1])[0] if runs else None


@pytest.mark.parametrize("profile_batch, profiled", [
    (2, [1]), ("2,4", [1, 2, 3]), (" 3, 5 ", [2, 3, 0]), ((1, 3), [0, 1, 2]), ([5, 5], [0])])
def test_profile_batch_profiles_those_batches(tmp_path, profile_batch, profiled):
    # 20 samples in batches of 5: 4 batches an epoch; batches are counted from 1 over the run
    cb = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), profile_batch=profile_batch)
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = _model().fit(x, y, batch_size=5, epochs=2, verbose=0, callbacks=[cb])
    assert len(history.history["loss"]) == 2
    profile = _profile(tmp_path)
    assert [s["step_num"] for s in profile["overview"]["steps"]] == profiled
    assert profile["ops"] and profile["overview"]["avg_compute_us"] > 0
    tf.profiler.experimental.start(str(tmp_path / "again"))
    tf.profiler.experimental.stop(save=False)


def test_profile_batch_seed_range_beyond_the_run_warns(tmp_path):
    cb = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), profile_batch="150, 160")
    x, y = _data()
    with pytest.warns(UserWarning, match=r"profile_batch=\(150, 160\) was never reached: "
                                         r"training ran 8 batches"):
        history = _model().fit(x, y, batch_size=5, epochs=2, verbose=0, callbacks=[cb])
    assert len(history.history["loss"]) == 2
    assert _profile(tmp_path) is None


def test_profile_batch_range_cut_short_keeps_what_ran(tmp_path):
    cb = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), profile_batch=(3, 100))
    x, y = _data()
    with pytest.warns(UserWarning, match="training ended after batch 4, before the end of "
                                         r"profile_batch=\(3, 100\)"):
        _model().fit(x, y, batch_size=5, epochs=1, verbose=0, callbacks=[cb])
    assert [s["step_num"] for s in _profile(tmp_path)["overview"]["steps"]] == [2, 3]


def test_profile_batch_with_a_profiler_already_running(tmp_path):
    from tensorlite import profiler  # noqa: PLC0415
    profiler.experimental.start(str(tmp_path / "mine"))
    try:
        cb = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path / "tb"), profile_batch=2)
        x, y = _data()
        with pytest.warns(UserWarning, match="failed to start the profiler.*Another profiler "
                                             "is running"):
            history = _model().fit(x, y, batch_size=5, epochs=1, verbose=0, callbacks=[cb])
        assert len(history.history["loss"]) == 1
        assert profiler.collector.active() is not None  # the user's profiler is untouched
    finally:
        run = profiler.experimental.stop()
    assert run.startswith(str(tmp_path / "mine"))
    assert _profile(tmp_path / "tb") is None


@pytest.mark.parametrize("profile_batch", [0, "0", (0, 0)])
def test_profile_batch_zero_no_warning(tmp_path, profile_batch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), profile_batch=profile_batch)


@pytest.mark.parametrize("profile_batch", ["a,b", "1,2,3", -1, (3, 1), (1, 2, 3), 1.5,
                                           "", (1, "x")])
def test_profile_batch_bad_format(tmp_path, profile_batch):
    with pytest.raises(ValueError, match="profile_batch must be a non-negative integer or "
                                         "2-tuple of positive integers"):
        tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), profile_batch=profile_batch)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="Unrecognized arguments"):
        tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), bogus=1)
    with pytest.raises(ValueError, match="update_freq"):
        tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), update_freq="sometimes")
    with pytest.raises(ValueError, match="histogram_freq"):
        tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), histogram_freq=-1)


def test_write_graph_goes_into_the_train_run_without_warnings(tmp_path):
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cb = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), write_graph=True)
        _model().fit(x, y, epochs=1, verbose=0, callbacks=[cb])
    assert sorted(os.listdir(tmp_path)) == ["train"]
    assert _accumulator(tmp_path / "train").Tags()["graph"]


def test_does_not_change_logs_or_default_writer(tmp_path):
    x, y = _data()
    outer = tf.summary.create_file_writer(str(tmp_path / "outer"))
    with outer.as_default(step=7):
        history = _model().fit(x, y, epochs=2, verbose=0,
                               callbacks=[tf.keras.callbacks.TensorBoard(str(tmp_path / "tb"))])
        assert tf.summary.experimental.get_step() == 7
        assert tf.summary.scalar("after", 1.0)
    assert "learning_rate" not in history.history
    outer.close()


# -- write_graph -------------------------------------------------------------------------------
def _keras_json(acc):
    import json  # noqa: PLC0415
    from tensorboard.util import tensor_util  # noqa: PLC0415
    (event,) = acc.Tensors("keras")
    assert event.step == 0
    assert acc.SummaryMetadata("keras").plugin_data.plugin_name == "graph_keras_model"
    return json.loads(tensor_util.make_ndarray(event.tensor_proto).item())


def test_write_graph_writes_the_train_step_op_graph(run):
    logdir, model, _, _ = run
    graph = _accumulator(logdir / "train").Graph()
    graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    assert graph_pb2.GraphDef.FromString(graph.SerializeToString()) == graph
    ops = [n.op for n in graph.node]
    assert ops.count("Placeholder") == 2  # x and y
    assert ops.count("MatMul") >= 2 and "AddV2" in ops and "Relu" in ops  # the Dense layers
    assert "ReluGrad" in ops  # the backward pass is part of the train step
    handles = {n.name for n in graph.node if n.op == "VarHandleOp"}
    assert handles == {w.name[:-2] for w in model.trainable_variables}
    names = {n.name for n in graph.node}
    for n in graph.node:
        for inp in n.input:
            assert inp.lstrip("^").split(":")[0] in names
    assert not _accumulator(logdir / "validation").Tags()["graph"]
    loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
    (path,) = [os.path.join(logdir, "train", f) for f in os.listdir(logdir / "train")]
    events = list(loader.EventFileLoader(path).Load())
    assert sum(e.HasField("graph_def") for e in events) == 1  # once, after the first batch


def test_write_graph_writes_the_keras_model_json(run):
    logdir, model, _, _ = run
    config = _keras_json(_accumulator(logdir / "train"))
    assert config["class_name"] == "Sequential"
    assert [layer["config"]["name"] for layer in config["config"]["layers"]] == \
        [layer.name for layer in model.layers]
    keras_util = pytest.importorskip("tensorboard.plugins.graph.keras_util")
    drawn = keras_util.keras_model_to_graph_def(config)  # what the conceptual graph shows
    assert [list(n.input) for n in drawn.node][1] == [drawn.node[0].name]


def test_write_graph_functional_model_wiring(tmp_path):
    inp = tf.keras.Input((3,), name="features")
    a = tf.keras.layers.Dense(4, name="left")(inp)
    b = tf.keras.layers.Dense(4, name="right")(inp)
    out = tf.keras.layers.Dense(1, name="out")(tf.keras.layers.Add(name="join")([a, b]))
    model = tf.keras.Model(inp, out)
    model.compile("sgd", "mse")
    x, y = _data()
    model.fit(x, y, epochs=1, verbose=0,
              callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path))])
    config = _keras_json(_accumulator(tmp_path / "train"))
    assert config["class_name"] == "Functional"
    keras_util = pytest.importorskip("tensorboard.plugins.graph.keras_util")
    drawn = {n.name.split("/")[-1]: list(n.input)
             for n in keras_util.keras_model_to_graph_def(config).node}
    scope = config["config"]["name"]
    assert drawn["join"] == [f"{scope}/left", f"{scope}/right"]
    assert drawn["left"] == [f"{scope}/features"] and drawn["out"] == [f"{scope}/join"]


def test_write_graph_false_writes_neither(tmp_path):
    x, y = _data()
    _model().fit(x, y, epochs=1, verbose=0, callbacks=[
        tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), write_graph=False)])
    acc = _accumulator(tmp_path / "train")
    assert not acc.Tags()["graph"] and "keras" not in acc.Tags()["tensors"]


def test_write_graph_run_eagerly_has_no_op_graph(tmp_path):
    x, y = _data()
    model = _model()
    model.compile(optimizer="sgd", loss="binary_crossentropy", run_eagerly=True)
    model.fit(x, y, epochs=1, verbose=0,
              callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path))])
    acc = _accumulator(tmp_path / "train")
    assert not acc.Tags()["graph"]
    assert _keras_json(acc)["class_name"] == "Sequential"


def test_write_graph_subclassed_model_skips_the_json_quietly(tmp_path):
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

    model = Net()
    model.compile("sgd", "mse")
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(x, y, epochs=2, verbose=0,
                  callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path))])
    acc = _accumulator(tmp_path / "train")
    assert "keras" not in acc.Tags()["tensors"]
    assert "MatMul" in [n.op for n in acc.Graph().node]  # the built-in step still traced
