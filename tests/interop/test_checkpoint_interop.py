"""TensorFlow's checkpoint format against real TensorFlow, both ways: checkpoints TensorFlow
wrote restore into the same tensorlite objects with equal values, and TensorFlow restores
what tensorlite wrote (tf.Module trees, a tf.keras MLP with its Adam state, a
CheckpointManager directory)."""
import os

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.interop.shared_data import X, Y

pytestmark = pytest.mark.interop


class Net(tf.Module):
    """The same architecture as tf_side.Net (values differ until restored)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.zeros((2, 3), np.float32))
        self.b = tf.Variable(np.zeros(3))
        self.blocks = [tf.Variable(np.zeros(4, np.int32)),
                       tf.Variable(np.array([[b"", b""], [b"", b""]], dtype=object))]
        self.step = tf.Variable(np.int64(0))


def mlp():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    model(X[:1])
    return model


@pytest.fixture(scope="module")
def tf_written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tf_written")
    facts = run_tf("write", directory)
    return directory, facts, np.load(directory / "expected.npz")


def test_tf_module_checkpoint_restores_here(tf_written):
    directory, facts, expected = tf_written
    net = Net()
    ckpt = tf.train.Checkpoint(net=net)
    ckpt.restore(tf.train.latest_checkpoint(directory / "module")).assert_consumed()
    np.testing.assert_array_equal(net.w.numpy(), expected["module_w"])
    np.testing.assert_array_equal(net.b.numpy(), expected["module_b"])
    assert net.b.dtype == tf.float64
    np.testing.assert_array_equal(net.blocks[0].numpy(), expected["module_blocks0"])
    assert net.blocks[1].numpy().tolist() == expected["module_blocks1"].tolist()
    assert int(net.step.numpy()) == 7 and int(ckpt.save_counter.numpy()) == 1
    assert sorted(k for k, _ in tf.train.list_variables(facts["module_path"])) \
        == facts["module_keys"]


def test_tf_reader_api_on_tf_checkpoint(tf_written):
    directory, facts, expected = tf_written
    reader = tf.train.load_checkpoint(directory / "module")
    shapes = reader.get_variable_to_shape_map()
    assert shapes["net/w/.ATTRIBUTES/VARIABLE_VALUE"] == [2, 3]
    assert reader.get_variable_to_dtype_map()["net/b/.ATTRIBUTES/VARIABLE_VALUE"] == tf.float64
    np.testing.assert_array_equal(
        tf.train.load_variable(directory / "module", "net/blocks/0/.ATTRIBUTES/VARIABLE_VALUE"),
        expected["module_blocks0"])


def test_tf_keras_weights_and_optimizer_restore_here(tf_written):
    directory, _, expected = tf_written
    model = mlp()
    model.load_weights(str(directory / "keras" / "w")).assert_consumed()
    np.testing.assert_allclose(model.predict(X, verbose=0), expected["keras_pred"],
                               rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == int(expected["keras_iterations"])
    # the optimizer's variables in tf.keras's order: iterations, then m and v per variable
    for i, v in enumerate(model.optimizer._checkpoint_variables()):
        np.testing.assert_allclose(v.numpy(), expected[f"keras_opt_{i}"], rtol=1e-6)
    model.train_on_batch(X, Y)  # training continues exactly where TensorFlow's did
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), expected["keras_next_kernel"],
                               rtol=1e-4, atol=1e-6)


def test_tf_keras_checkpoint_restores_into_an_unbuilt_model_as_it_builds(tf_written):
    """Deferred restoration of TensorFlow's file: the weights when the model first runs,
    Adam's moments at its first step, which continues TensorFlow's training exactly."""
    directory, _, expected = tf_written
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    status = model.load_weights(str(directory / "keras" / "w"))
    model.train_on_batch(X, Y)
    status.assert_consumed()
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), expected["keras_next_kernel"],
                               rtol=1e-4, atol=1e-6)


def test_tf_checkpoint_manager_directory_here(tf_written):
    directory, facts, _ = tf_written
    ckpt = tf.train.Checkpoint(v=tf.Variable(0.0))
    manager = tf.train.CheckpointManager(ckpt, directory / "managed", max_to_keep=2)
    assert manager.checkpoints == facts["managed"]
    ckpt.restore(manager.latest_checkpoint).assert_consumed()
    assert float(ckpt.v.numpy()) == 3.0


@pytest.fixture(scope="module")
def tf_read(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tl_written")
    net = Net()
    rng = np.random.default_rng(5)
    net.w.assign(rng.normal(size=(2, 3)).astype(np.float32))
    net.b.assign(rng.normal(size=3))
    net.blocks[0].assign(np.array([3, 1, 4, 1], np.int32))
    net.blocks[1].assign(np.array([[b"x", b""], [b"\x00\xff", b"long" * 40]], dtype=object))
    net.step.assign(np.int64(42))
    tf.train.Checkpoint(net=net).save(str(directory / "module" / "ckpt"))
    model = mlp()
    model.fit(X, Y, epochs=2, batch_size=4, verbose=0)
    model.save_weights(str(directory / "keras" / "w"))
    pred = model.predict(X, verbose=0)
    model.train_on_batch(X, Y)
    next_kernel = model.layers[0].kernel.numpy()
    ckpt = tf.train.Checkpoint(v=tf.Variable(0.0))
    manager = tf.train.CheckpointManager(ckpt, directory / "managed", max_to_keep=2)
    for i in range(3):
        ckpt.v.assign(float(i + 1))
        manager.save()
    facts = run_tf("read", directory)
    return net, pred, next_kernel, facts, np.load(directory / "tf_read.npz"), directory


def test_tensorflow_restores_our_module_checkpoint(tf_read):
    net, _, _, facts, got, _ = tf_read
    np.testing.assert_array_equal(got["module_w"], net.w.numpy())
    np.testing.assert_array_equal(got["module_b"], net.b.numpy())
    np.testing.assert_array_equal(got["module_blocks0"], [3, 1, 4, 1])
    assert got["module_blocks1"].tolist() == [[b"x", b""], [b"\x00\xff", b"long" * 40]]
    assert int(got["module_step"]) == 42 and int(got["module_save_counter"]) == 1
    assert facts["module_dtypes"]["net/b/.ATTRIBUTES/VARIABLE_VALUE"] == "float64"


def test_tensorflow_loads_our_keras_weights_and_continues(tf_read):
    _, pred, next_kernel, _, got, _ = tf_read
    np.testing.assert_allclose(got["keras_pred"], pred, rtol=1e-5, atol=1e-6)
    assert int(got["keras_iterations"]) == 4
    np.testing.assert_allclose(got["keras_next_kernel"], next_kernel, rtol=1e-4, atol=1e-6)


def test_tensorflow_reads_our_checkpoint_manager_state(tf_read):
    *_, facts, _, directory = tf_read
    assert facts["managed_latest"] == os.path.join(directory, "managed", "ckpt-3")
    assert facts["managed_state"] == [os.path.join(directory, "managed", f"ckpt-{i}")
                                      for i in (2, 3)]
    assert facts["managed_value"] == 3.0
