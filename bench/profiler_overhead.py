"""Profiler overhead, in one run, interleaved:

1. a GradientTape training step: bare, inside `Trace` step markers with the profiler off,
   and with the profiler recording;
2. Keras `fit` on a tf.data pipeline (map, batch, prefetch): with fit's per-step `Trace`
   replaced by a no-op (the reference: no instrumentation on the Keras side), as shipped with
   the profiler off (step markers, tf.data's trace hooks), and with the profiler on
   (TensorBoard callback's profile_batch over every batch; the profile's writing timed apart).

    python bench/profiler_overhead.py [--steps 300] [--repeats 5]

Goal (issue 6): < 2% when not profiling.
"""
import contextlib
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cleanup import exit_on_signals  # noqa: E402


def make_step():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.random((32, 784), dtype=np.float32))
    y = tf.constant(rng.integers(0, 10, 32))
    w1 = tf.Variable(rng.normal(0, 0.05, (784, 128)).astype(np.float32))
    w2 = tf.Variable(rng.normal(0, 0.05, (128, 10)).astype(np.float32))

    def step():
        with tf.GradientTape() as tape:
            logits = tf.nn.relu(x @ w1) @ w2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(0.01 * g1)
        w2.assign_sub(0.01 * g2)
    return step


def seconds(step, steps, trace=False):
    start = time.perf_counter()
    for i in range(steps):
        if trace:
            with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
                step()
        else:
            step()
    return time.perf_counter() - start


def make_fit():
    from tensorlite.keras.engine import training  # noqa: PLC0415
    rng = np.random.default_rng(0)
    x = rng.random((2048, 64), dtype=np.float32)
    y = rng.integers(0, 10, 2048)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2.0, b)) \
        .batch(32).prefetch(tf.data.AUTOTUNE)
    model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"),
                                 tf.keras.layers.Dense(10)])
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(ds, epochs=1, verbose=0)
    real_trace = training.Trace

    def run(mode, logdir=None):
        callbacks = []
        if mode == "on":
            callbacks = [tf.keras.callbacks.TensorBoard(logdir, profile_batch=(1, 64))]
        training.Trace = (lambda *a, **k: contextlib.nullcontext()) if mode == "bare" \
            else real_trace
        try:
            start = time.perf_counter()
            model.fit(ds, epochs=1, verbose=0, callbacks=callbacks)
            return time.perf_counter() - start
        finally:
            training.Trace = real_trace
    return run


def timed_stop(spent):
    """profiler.experimental.stop, adding the seconds it takes (analysing and writing the
    profile) to spent[0]."""
    real = tf.profiler.experimental.stop

    def stop(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start
    return stop


def fit_overhead(repeats):
    run = make_fit()
    bare, off, on, writing = [], [], [], []
    real_stop = tf.profiler.experimental.stop
    for _ in range(repeats):
        bare.append(run("bare"))
        off.append(run("off"))
        spent = [0.0]
        tf.profiler.experimental.stop = timed_stop(spent)
        try:
            with tempfile.TemporaryDirectory() as logdir:
                on.append(run("on", logdir) - spent[0])
        finally:
            tf.profiler.experimental.stop = real_stop
        writing.append(spent[0])
    b, f, n, w = (statistics.median(v) * 1e3 for v in (bare, off, on, writing))
    print(f"fit, 64 steps, fit's Trace a no-op:   {b:8.1f} ms")
    print(f"fit as shipped, profiler off:        {f:8.1f} ms  ({(f / b - 1) * 100:+.1f}%, goal < 2%)")
    print(f"fit, profiler on (profile_batch):    {n:8.1f} ms  ({(n / b - 1) * 100:+.1f}%)")
    print(f"  then analysing and writing it:     {w:8.1f} ms  (once, when the profiler stops)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps timed a run")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs")
    args = parser.parse_args()
    exit_on_signals()  # SIGTERM too removes the profiles
    with tempfile.TemporaryDirectory() as logdir:  # the profiles, removed at the end
        step_overhead(args, logdir)
    fit_overhead(args.repeats)


def step_overhead(args, logdir):
    """A training step's time bare, with Trace markers, and with the profiler on."""
    step = make_step()
    seconds(step, 20)
    off, on, base = [], [], []
    for _ in range(args.repeats):  # interleaved so machine load hits all three alike
        base.append(seconds(step, args.steps))
        off.append(seconds(step, args.steps, trace=True))  # Trace markers, profiler off
        tf.profiler.experimental.start(logdir)
        on.append(seconds(step, args.steps, trace=True))
        tf.profiler.experimental.stop()
    b, f, n = (statistics.median(v) / args.steps * 1e6 for v in (base, off, on))
    print(f"training step, no profiler:          {b:8.1f} us")
    print(f"with Trace markers, profiler off:    {f:8.1f} us  ({(f / b - 1) * 100:+.1f}%, goal < 2%)")
    print(f"profiler on:                         {n:8.1f} us  ({(n / b - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
