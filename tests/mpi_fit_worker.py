"""Run under `mpiexec -n N` by test_distribute_multi_worker.py: Keras fit under
MultiWorkerMirroredStrategy from given initial weights, recording the weights after every
step; each rank saves its record and the last step's all-reduce events, and tries to save a
checkpoint (only the chief may). An optional 4th argument sets the fusion bucket size."""
import sys

import numpy as np

import tensorlite as tf
from distribute_fixtures import WeightRecorder, small_classifier   # beside this script


def main(data_path, out_dir, shuffle, bytes_per_pack=0):
    data = np.load(data_path)
    options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=bytes_per_pack)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    rank = strategy.cluster_resolver.task_id
    with strategy.scope():
        tf.random.set_seed(100 + rank)          # different on each rank: the chief's win
        model = small_classifier()
    if "initial_0" in data:
        model.set_weights([data[f"initial_{i}"] for i in range(4)])
    recorder = WeightRecorder()
    hist = model.fit(data["x"], data["y"], batch_size=16, epochs=2, shuffle=shuffle,
                     callbacks=[recorder], verbose=0)
    model.save_weights(f"{out_dir}/ckpt_rank{rank}.weights")
    np.savez(f"{out_dir}/rank{rank}.npz", steps=np.stack(recorder.steps),
             loss=np.array(hist.history["loss"]), size=strategy.num_replicas_in_sync,
             collectives=collectives(strategy), **events(strategy.last_reduction))


def events(reduction):
    """The last step's (what, index, time) all-reduce events as three arrays."""
    kinds, index, times = zip(*reduction.events)
    return {"event_kind": np.array(kinds), "event_index": np.array(index),
            "event_time": np.array(times)}


def collectives(strategy):
    """all_reduce, reduce, gather and a distributed dataset's parts, seen from this rank."""
    def fn(x):
        ctx = tf.distribute.get_replica_context()
        mine = x * tf.cast(ctx.replica_id_in_sync_group + 1, tf.float32)
        return ctx.all_reduce("sum", mine), mine
    summed, mine = strategy.run(fn, args=(tf.constant(2.0),))
    ds = tf.data.Dataset.range(8).batch(4)
    parts = [b.numpy().tolist() for b in strategy.experimental_distribute_dataset(ds)]
    return np.array([float(summed), float(strategy.reduce("MEAN", mine, axis=None)),
                     *strategy.gather(tf.constant([float(mine)]), axis=0).numpy().tolist(),
                     *np.ravel(parts)])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] == "shuffle",
         int(sys.argv[4]) if len(sys.argv) > 4 else 0)
