"""The Keras 3 object graph beside tf.keras 2's in tensorlite's checkpoints (real Keras 3 and
tf.keras 2 restore them in tests/interop/test_keras3_checkpoint_interop.py): each Keras 3
name leads to the same node as the tf.keras 2 one."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.checkpoint.protos import TrackableObjectGraph


def _graph(path):
    proto = TrackableObjectGraph()
    proto.ParseFromString(tf.train.load_checkpoint(path).get_tensor(
        "_CHECKPOINTABLE_OBJECT_GRAPH"))
    return proto


def _follow(proto, *names):
    node = 0
    for name in names:
        node = {c.local_name: c.node_id for c in proto.nodes[node].children}[name]
    return node


def _model(kind):
    layers = [tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(2)]
    if kind == "sequential":
        return tf.keras.Sequential([tf.keras.Input((3,))] + layers)
    inputs = tf.keras.Input((3,))
    return tf.keras.Model(inputs, layers[1](layers[0](inputs)))


@pytest.mark.parametrize("kind", ["functional", "sequential"])
def test_keras3_edges_reach_the_tf_keras2_nodes(tmp_path, kind):
    model = _model(kind)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
    proto = _graph(path)
    keras3 = ("model", "_operations", "1", "_kernel") if kind == "functional" else \
        ("model", "_functional", "_operations", "1", "_kernel")
    assert _follow(proto, *keras3) == _follow(proto, "model", "layer_with_weights-0", "kernel")
    optimizer = ("model", "optimizer")
    assert _follow(proto, *optimizer, "_momentums", "1") != \
        _follow(proto, *optimizer, "_velocities", "1")
    assert "_variables" not in {c.local_name for c in proto.nodes[_follow(proto, *optimizer)]
                                .children}  # numbered differently by the two Kerases


def test_a_checkpoint_sharing_nothing_with_a_built_model_is_an_error(tmp_path):
    module = tf.Module()
    module.w = tf.Variable(np.ones((2, 2), np.float32))
    path = tf.train.Checkpoint(net=module).write(str(tmp_path / "ckpt"))
    model = _model("functional")
    with pytest.raises(tf.errors.NotFoundError, match="none of its 1 values matched"):
        tf.train.Checkpoint(model=model).read(path)
    unbuilt = tf.keras.Sequential([tf.keras.layers.Dense(2)])  # waits: restored as it builds
    tf.train.Checkpoint(model=unbuilt).read(path)


def test_values_never_restored_are_warned_about_unless_expect_partial(tmp_path, caplog):
    """TensorFlow's semantics: a restore that ends with saved values nothing took logs them
    (when its status and the objects still waiting for values are gone); expect_partial()
    silences it."""
    import gc  # noqa: PLC0415
    model = _model("functional")
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
    for partial in (False, True):
        caplog.clear()
        fresh = _model("functional")  # no optimizer: its saved values have no object
        status = tf.train.Checkpoint(model=fresh).read(path)
        status.assert_existing_objects_matched()
        if partial:
            status.expect_partial()
        del status, fresh  # the model waited for an optimizer: the restore ends with it
        gc.collect()
        warned = [r.getMessage() for r in caplog.records if r.name == "tensorflow"]
        assert bool(warned) != partial
        if not partial:
            assert any("model/optimizer/_iterations" in m for m in warned)
