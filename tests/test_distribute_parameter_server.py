"""ParameterServerStrategy with ClusterCoordinator (asynchronous, in-process workers): trains
to the accuracy of single-process training; scheduling is asynchronous; errors reach join();
remote tasks are refused with a clear error."""
import os
import threading
import time

import numpy as np
import pytest

import tensorlite as tf


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 4)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5, 1.0]) > 0).astype(np.int64)
    return x, y


def _model():
    return tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(4,)),
                                tf.keras.layers.Dense(2)])


def _train(strategy, optimizer_class, lr, x, y, steps):
    """Seed 004's async PS loop: schedule train steps over per-worker datasets; returns
    (model, optimizer, the steps' RemoteValues of (loss, worker pid), the coordinator)."""
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        model = _model()
        optimizer = optimizer_class(lr)

    def dataset_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).repeat().batch(32)
    per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

    def train_step(iterator):
        def replica_fn(batch):
            xb, yb = batch
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                    yb, model(xb), from_logits=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss, os.getpid()
        return strategy.run(replica_fn, args=(next(iterator),))
    results = [coordinator.schedule(train_step, args=(per_worker_iterator,))
               for _ in range(steps)]
    coordinator.join()
    return model, optimizer, results, coordinator


def test_parameter_server_training_reaches_single_process_accuracy():
    x, y = _data()
    single = _model()
    single.compile(tf.keras.optimizers.Adam(0.01),
                   tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    single.fit(x, y, batch_size=32, epochs=10, verbose=0)
    single_acc = np.mean(np.argmax(single.predict(x, verbose=0), 1) == y)

    strategy = tf.distribute.experimental.ParameterServerStrategy(num_workers=2)
    model, optimizer, results, _ = _train(strategy, tf.keras.optimizers.Adam, 0.01, x, y,
                                          160)
    assert int(optimizer.iterations.numpy()) == 160     # 10 epochs of 16 batches
    assert np.isfinite(results[-1].fetch()[0])
    ps_acc = np.mean(np.argmax(model.predict(x, verbose=0), 1) == y)
    assert single_acc > 0.95 and ps_acc > 0.95
    assert abs(ps_acc - single_acc) < 0.03


def test_schedule_is_asynchronous_and_join_waits():
    strategy = tf.distribute.experimental.ParameterServerStrategy(num_workers=2)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    gate = threading.Event()
    with strategy.scope():
        v = tf.Variable(0.0)

    def step():
        gate.wait(10)
        v.assign_add(1.0)
        return v.read_value()
    remotes = [coordinator.schedule(step) for _ in range(4)]
    assert not coordinator.done() and float(v.numpy()) == 0.0   # nothing ran yet
    gate.set()
    coordinator.join()
    assert coordinator.done() and float(v.numpy()) == 4.0
    assert sorted(float(r.fetch()) for r in remotes) == [1.0, 2.0, 3.0, 4.0]


def test_errors_reach_join_and_fetch():
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
        tf.distribute.experimental.ParameterServerStrategy(num_workers=1))
    remote = coordinator.schedule(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        coordinator.join()
    with pytest.raises(ZeroDivisionError):
        remote.fetch()


def test_bad_configurations():
    with pytest.raises(ValueError, match="ParameterServerStrategy"):
        tf.distribute.experimental.coordinator.ClusterCoordinator(
            tf.distribute.MirroredStrategy())
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        {"worker": ["10.0.0.1:2222"], "ps": ["10.0.0.2:2222"]})
    with pytest.raises(NotImplementedError, match="remote gRPC tasks"):
        tf.distribute.experimental.ParameterServerStrategy(resolver)


@pytest.mark.slow
def test_parameter_server_on_dask_workers_reaches_single_process_accuracy():
    pytest.importorskip("distributed")
    from distributed import Client
    service = tf.data.experimental.service
    dispatcher = service.DispatchServer()
    workers = [service.WorkerServer(service.WorkerConfig(dispatcher_address=dispatcher.target))
               for _ in range(2)]
    client = Client(dispatcher.target, set_as_default=False, timeout=60,
                    security=dispatcher.security)
    try:
        deadline = time.monotonic() + 120
        while len(client.scheduler_info()["workers"]) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
            {}, master=dispatcher.target, rpc_layer="dask")
        strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
        x, y = _data()
        model, _, results, coordinator = _train(strategy, tf.keras.optimizers.SGD, 0.1, x,
                                                y, 120)
        pids = {int(r.fetch()[1]) for r in results}
        assert os.getpid() not in pids and len(pids) >= 1     # ran in worker processes
        acc = np.mean(np.argmax(model.predict(x, verbose=0), 1) == y)
        assert acc > 0.95                                    # the server's variables learned
        failing = coordinator.schedule(lambda: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            coordinator.join()
        with pytest.raises(ZeroDivisionError):
            failing.fetch()
    finally:
        client.close()
        for w in workers:
            w.stop()
        dispatcher.stop()
