"""Run under `mpiexec -n N` by test_distribute_multi_worker.py: Keras fit under
MultiWorkerMirroredStrategy from given initial weights, recording the weights after every
step; each rank saves its record, and tries to save a checkpoint (only the chief may)."""
import sys

import numpy as np

import tensorlite as tf


def main(data_path, out_dir, shuffle):
    data = np.load(data_path)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rank = strategy.cluster_resolver.task_id
    with strategy.scope():
        tf.random.set_seed(100 + rank)          # different on each rank: the chief's win
        model = tf.keras.Sequential([tf.keras.layers.Dense(6, activation="tanh",
                                                           input_shape=(5,)),
                                     tf.keras.layers.Dense(3)])
        model.compile(tf.keras.optimizers.Adam(0.05),
                      tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    if "initial_0" in data:
        model.set_weights([data[f"initial_{i}"] for i in range(4)])
    steps = []

    class Recorder(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            steps.append(np.concatenate([w.ravel() for w in self.model.get_weights()]))
    hist = model.fit(data["x"], data["y"], batch_size=16, epochs=2, shuffle=shuffle,
                     callbacks=[Recorder()], verbose=0)
    model.save_weights(f"{out_dir}/ckpt_rank{rank}.weights")
    np.savez(f"{out_dir}/rank{rank}.npz", steps=np.stack(steps),
             loss=np.array(hist.history["loss"]), size=strategy.num_replicas_in_sync)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] == "shuffle")
