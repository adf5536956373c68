"""Deferred restoration, as TensorFlow's checkpoint guide describes it: values restored
before their objects exist (a Keras model's weights before its first call, an optimizer's
slots before its first step, attributes and list entries added later) are assigned when
the objects appear, outside any graph being traced; and `tf.init_scope`."""
import gc

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.checkpoint import deferred

X = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
Y = np.random.default_rng(1).normal(size=(8, 3)).astype(np.float32)


def dense_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(5, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    return model


def trained_checkpoint(tmp_path, steps=1):
    """(a model trained `steps` steps, its checkpoint's path)."""
    trained = dense_model()
    for _ in range(steps):
        trained.train_on_batch(X, Y)
    return trained, tf.train.Checkpoint(model=trained).save(tmp_path / "ckpt")


def test_an_unbuilt_models_weights_are_restored_when_it_builds(tmp_path):
    trained, path = trained_checkpoint(tmp_path)
    fresh = dense_model()
    status = tf.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(AssertionError, match="layer_with_weights-0"):
        status.assert_consumed()  # the weights wait for the model to build
    status.assert_existing_objects_matched()
    np.testing.assert_allclose(fresh.predict(X, verbose=0), trained.predict(X, verbose=0),
                               rtol=1e-6)
    with pytest.raises(AssertionError, match="optimizer/_momentums/0"):
        status.assert_consumed()  # Adam's moments wait for the first step


def test_training_resumes_exactly_with_slots_restored_at_the_first_step(tmp_path):
    """Adam's moments and iteration count are made at the first step (inside the traced
    train step) and restored then: the step continues the saved run exactly."""
    trained, path = trained_checkpoint(tmp_path, steps=3)
    trained.train_on_batch(X, Y)
    fresh = dense_model()
    status = tf.train.Checkpoint(model=fresh).restore(path)
    fresh.train_on_batch(X, Y)
    status.assert_consumed()
    assert int(fresh.optimizer.iterations.numpy()) == 4
    for a, b in zip(fresh.weights, trained.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    fresh.train_on_batch(X, Y)  # the restore is no part of the step's graph
    trained.train_on_batch(X, Y)
    for a, b in zip(fresh.weights, trained.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


class Lazy(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.zeros([x.shape[-1]]))
        return x * self.w


def test_a_variable_made_inside_a_trace_is_restored_outside_the_graph(tmp_path):
    saved = Lazy()
    saved(tf.ones([2]))
    saved.w.assign([3.0, 4.0])
    path = tf.train.Checkpoint(m=saved).save(tmp_path / "ckpt")
    fresh = Lazy()
    tf.train.Checkpoint(m=fresh).restore(path)
    assert fresh(tf.ones([2])).numpy().tolist() == [3.0, 4.0]
    fresh.w.assign([5.0, 6.0])  # later calls read the variable, never the checkpoint
    assert fresh(tf.ones([2])).numpy().tolist() == [5.0, 6.0]


def test_attributes_and_list_entries_added_after_a_restore(tmp_path):
    """The checkpoint guide's 'Delayed restorations' and 'Lists and dictionaries'."""
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    save.mapped = {"one": save.listed[0]}
    save.kernel = tf.Variable([7.0, 8.0])
    path = save.save(tmp_path / "ckpt")
    restore = tf.train.Checkpoint()
    status = restore.restore(path)
    late = tf.Variable([0.0, 0.0])
    restore.kernel = late
    assert late.numpy().tolist() == [7.0, 8.0]
    restore.listed = []
    assert repr(restore.listed) == "ListWrapper([])"
    first, second = tf.Variable(0.0), tf.Variable(0.0)
    restore.listed.append(first)
    restore.listed.extend([second])
    assert (float(first.numpy()), float(second.numpy())) == (1.0, 2.0)
    restore.mapped = {}
    restore.mapped["one"] = first  # already restored: the same object again
    status.assert_consumed()


def test_a_waiting_restore_ends_with_its_object(tmp_path):
    """Nothing is kept alive by a restore that waits: its objects may be collected."""
    _, path = trained_checkpoint(tmp_path)
    model = dense_model()
    status = tf.train.Checkpoint(model=model).restore(path)
    assert deferred._WAITING
    del model
    gc.collect()
    assert not deferred._WAITING
    with pytest.raises(AssertionError, match="layer_with_weights-0"):
        status.assert_consumed()


def test_init_scope_lifts_a_one_time_update_out_of_the_graph():
    """The tf.function guide's Model whose first trace increments a counter once."""
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(0)
            self.counter = 0

        @tf.function
        def __call__(self):
            if self.counter == 0:
                with tf.init_scope():
                    self.counter += 1
                    self.v.assign_add(1)
            return self.v
    m = Model()
    assert [int(m().numpy()) for _ in range(3)] == [1, 1, 1]
    assert int(m.v.numpy()) == 1 and m.counter == 1
    with tf.GradientTape() as tape:  # and it records nothing on a tape
        x = tf.constant(2.0)
        tape.watch(x)
        with tf.init_scope():
            y = x * x
    assert tape.gradient(y, x) is None
