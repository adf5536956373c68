"""Optimizer update speed: `apply_gradients` eagerly and inside a `tf.function`, beside a
hand-written in-place NumPy Adam/SGD step on the same arrays (the floor for an update).

Shapes are the MLP of bench/train_throughput.py (784-128-10: 4 variables, 101,770 weights).
Prints microseconds per update (median of --repeats runs of --steps updates each) and the
ratio to the NumPy reference measured in the same run.

    python bench/optimizer_step.py [--repeats 5] [--steps 300] [--only adam,sgd]

The eager figures are the ones to compare before/after a change to the optimizers (issue 10
asks for no regression beyond 5%); the graph figures show what a traced train step pays
for its update (real graph ops, no host callback).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402

SHAPES = [(784, 128), (128,), (128, 10), (10,)]

OPTIMIZERS = {
    "sgd": lambda: tf.keras.optimizers.SGD(0.01),
    "sgd_momentum": lambda: tf.keras.optimizers.SGD(0.01, momentum=0.9),
    "adam": lambda: tf.keras.optimizers.Adam(1e-3),
    "adamw": lambda: tf.keras.optimizers.AdamW(1e-3),
    "rmsprop": lambda: tf.keras.optimizers.RMSprop(1e-3),
    "adagrad": lambda: tf.keras.optimizers.Adagrad(1e-3),
}


def _numpy_adam(ws, gs, steps):
    ms = [np.zeros_like(w) for w in ws]
    vs = [np.zeros_like(w) for w in ws]
    ts = [np.empty_like(w) for w in ws]
    t0 = time.perf_counter()
    for i in range(steps):
        t = i + 1
        lr = 1e-3 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        for w, g, m, v, s in zip(ws, gs, ms, vs, ts):
            m *= 0.9
            np.multiply(g, 0.1, out=s)
            m += s
            v *= 0.999
            np.multiply(g, g, out=s)
            s *= 0.001
            v += s
            np.sqrt(v, out=s)
            s += 1e-7
            np.divide(m, s, out=s)
            s *= lr
            w -= s
    return (time.perf_counter() - t0) / steps


def _time_opt(make, graph, steps):
    rng = np.random.default_rng(0)
    ws = [tf.Variable(rng.standard_normal(s).astype(np.float32)) for s in SHAPES]
    gs = [tf.constant(rng.standard_normal(s).astype(np.float32) * 1e-3) for s in SHAPES]
    opt = make()
    pairs = list(zip(gs, ws))
    if graph:
        step = tf.function(lambda *g: opt.apply_gradients(zip(g, ws)))
        step(*gs)
        t0 = time.perf_counter()
        for _ in range(steps):
            step(*gs)
    else:
        opt.apply_gradients(pairs)
        t0 = time.perf_counter()
        for _ in range(steps):
            opt.apply_gradients(pairs)
    return (time.perf_counter() - t0) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5, help="interleaved runs; medians are reported")
    ap.add_argument("--steps", type=int, default=300, help="optimizer steps per timing")
    ap.add_argument("--only", default="",
                    help="comma-separated optimizer names to time (default: all)")
    ap.add_argument("--no-graph", action="store_true",
                    help="time eager steps only (no tf.function)")
    args = ap.parse_args()
    names = [n for n in OPTIMIZERS if not args.only or n in args.only.split(",")]
    print(f"load: {os.getloadavg()[0]:.2f}")
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    gs = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    ref = []
    results = {n: {"eager": [], "graph": []} for n in names}
    for _ in range(args.repeats):  # interleaved, so load swings hit every figure alike
        ref.append(_numpy_adam(ws, gs, args.steps))
        for n in names:
            results[n]["eager"].append(_time_opt(OPTIMIZERS[n], False, args.steps))
            if not args.no_graph:
                results[n]["graph"].append(_time_opt(OPTIMIZERS[n], True, args.steps))
    r = statistics.median(ref)
    print(f"numpy in-place Adam reference: {r * 1e6:8.1f} us/update")
    for n in names:
        e = statistics.median(results[n]["eager"])
        line = f"{n:14s} eager {e * 1e6:8.1f} us ({e / r:5.2f}x numpy adam)"
        if results[n]["graph"]:
            g = statistics.median(results[n]["graph"])
            line += f"   tf.function {g * 1e6:8.1f} us ({g / r:5.2f}x)"
        print(line)


if __name__ == "__main__":
    main()
