"""The profiler workflow of the TF Dev Summit 2020 talk "TensorFlow 2 Performance
Profiler" on a deliberately slow input pipeline.

Trains a small model twice with the Keras TensorBoard callback's `profile_batch`, first on a
pipeline whose map runs one element at a time on the training thread, then on the same
pipeline with `num_parallel_calls=AUTOTUNE` and `prefetch`; prints each profile's Overview
verdict and the Input Pipeline Analyzer's advice, and where report.html is.

    python examples/profile_input_pipeline.py [--logdir logs/profile_demo]
"""
import argparse
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
from tensorlite import profiler  # noqa: E402


def augment(image, label):
    """A slow per-element preprocessing step (0.5 ms of waiting on I/O, say)."""
    time.sleep(0.0005)
    return image * 2.0 - 1.0, label


def dataset(fast):
    rng = np.random.default_rng(0)
    images = rng.random((512, 256), dtype=np.float32)
    labels = rng.integers(0, 10, 512)
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE if fast else None).batch(16)
    return ds.prefetch(tf.data.AUTOTUNE) if fast else ds


def train(logdir, fast):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1024, activation="relu"),
                                 tf.keras.layers.Dense(1024, activation="relu"),
                                 tf.keras.layers.Dense(10)])
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    tb = tf.keras.callbacks.TensorBoard(log_dir=logdir, profile_batch="10, 25")
    model.fit(dataset(fast), epochs=1, verbose=0, callbacks=[tb])
    profile, _ = profiler.load(profiler.latest_run(logdir))
    return profile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logdir", default=os.path.join("logs", "profile_demo"))
    args = parser.parse_args()
    shutil.rmtree(args.logdir, ignore_errors=True)
    for name, fast in (("slow", False), ("fast", True)):
        logdir = os.path.join(args.logdir, name)
        o_ip = train(logdir, fast)
        o, ip = o_ip["overview"], o_ip["input_pipeline"]
        print(f"== {name} pipeline: {o['verdict']}, average step "
              f"{o['avg_step_us'] / 1e3:.2f} ms, {o['input_percent']:.0f}% waiting for input")
        print(f"   {o['recommendation']['text']}")
        for a in ip["advice"]:
            print(f"   - [{a['kind']}] {a['text']}")
        print(f"   report: {os.path.join(profiler.latest_run(logdir), profiler.REPORT_FILE)}")


if __name__ == "__main__":
    main()
