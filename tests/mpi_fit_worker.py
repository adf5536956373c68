"""Run under `mpiexec -n N` by test_distribute_multi_worker.py: Keras fit under
MultiWorkerMirroredStrategy from given initial weights, recording the weights after every
step; each rank saves its record, and tries to save a checkpoint (only the chief may)."""
import sys

import numpy as np

import tensorlite as tf
from distribute_fixtures import WeightRecorder, small_classifier   # beside this script


def main(data_path, out_dir, shuffle):
    data = np.load(data_path)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
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
             collectives=collectives(strategy))


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
    main(sys.argv[1], sys.argv[2], sys.argv[3] == "shuffle")
