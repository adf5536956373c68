""""Seeing the speed up" and "Compilation" (the notes "Structure of Deep Learning
Frameworks" and the TF Dev Summit 2020 talk "Research with TensorFlow"): eager versus
tf.function versus jit-compiled, beside a hand-written NumPy floor, all timed in the same run.

- the notes' SequentialModel (Flatten(input_shape=(28, 28)), Dense(128, relu), Dropout(0.2),
  Dense(10)) on tf.random.uniform([60, 28, 28]);
- the talk's `log(2 * exp(relu(x + 1)))` on [100, 100] float32;
- the notes' XLA example `reduce_sum(x + y * z)` on [512, 512] float32.

    python bench/graph_speedup.py [--repeats 9] [--number 1000]

Candidates are timed in interleaved rounds (each round times every candidate once, `number`
calls each), so load from neighbours hits all of them alike; figures are medians over the
rounds, in microseconds per call. TensorFlow's figures are added when it is installed.
Goals: graph within 1.3x of the NumPy floor and never slower than tensorlite eager; the
compiled function of the talk at least 1.25x faster than the plain graph.
"""
import argparse
import os
import statistics
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
from examples.seed_models import SequentialModel  # noqa: E402
from tensorlite.graph import compiler  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _report import skipped  # noqa: E402


def interleaved(candidates, number, repeats):
    """{name: median µs per call}, timing every candidate once per round."""
    for fn in candidates.values():  # warm up: trace, compile, fault pages in
        for _ in range(3):
            fn()
    runs = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, fn in candidates.items():
            runs[name].append(timeit.timeit(fn, number=number) / number * 1e6)
    return {name: statistics.median(t) for name, t in runs.items()}


def model_candidates():
    input_data = tf.random.uniform([60, 28, 28])
    eager_model = SequentialModel()
    graph_model = tf.function(eager_model)
    jit_model = tf.function(eager_model, jit_compile=True)
    ref = eager_model(input_data).numpy()  # builds the layers
    x = input_data.numpy()
    w1, b1 = eager_model.dense_1.kernel.numpy(), eager_model.dense_1.bias.numpy()
    w2, b2 = eager_model.dense_2.kernel.numpy(), eager_model.dense_2.bias.numpy()

    def numpy_model(x):
        h = x.reshape(60, -1) @ w1
        h += b1
        np.maximum(h, 0, out=h)
        out = h @ w2
        out += b2
        return out
    for f in (graph_model, jit_model):
        np.testing.assert_allclose(f(input_data).numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numpy_model(x), ref, rtol=1e-5, atol=1e-6)
    return {"numpy": lambda: numpy_model(x), "eager": lambda: eager_model(input_data),
            "graph": lambda: graph_model(input_data), "compiled": lambda: jit_model(input_data)}


def seed001(x):
    return tf.math.log(2 * tf.exp(tf.nn.relu(x + 1)))


def seed001_candidates():
    x = tf.random.normal([100, 100])
    a = x.numpy()
    one, two = np.float32(1), np.float32(2)

    def numpy_plain(a):
        return np.log(2 * np.exp(np.maximum(a + 1, 0)))

    def numpy_in_place(a):
        t = np.add(a, one)
        np.maximum(t, 0, out=t)
        np.exp(t, out=t)
        np.multiply(t, two, out=t)
        return np.log(t, out=t)
    zeros = np.zeros_like(a)

    def numpy_best(a):  # what the jit generates: in place, ReLU against a zero array
        t = np.add(a, one)
        np.maximum(t, zeros, out=t)
        np.exp(t, out=t)
        np.multiply(t, two, out=t)
        return np.log(t, out=t)
    graph = tf.function(seed001)
    compiled = tf.function(seed001, experimental_compile=True)
    ref = seed001(x).numpy()
    for f in (graph, compiled):
        f(x)
        np.testing.assert_allclose(f(x).numpy(), ref, rtol=1e-6)
    return {"numpy": lambda: numpy_plain(a), "numpy in place": lambda: numpy_in_place(a),
            "numpy best": lambda: numpy_best(a), "eager": lambda: seed001(x), "graph": lambda: graph(x),
            "compiled": lambda: compiled(x)}


def xla_candidates():
    rng = np.random.default_rng(0)
    arrays = [rng.random((512, 512), dtype=np.float32) for _ in range(3)]
    x, y, z = (tf.constant(a) for a in arrays)

    def model_fn(x, y, z):
        return tf.reduce_sum(x + y * z)
    graph = tf.function(model_fn)
    compiled = tf.function(model_fn, jit_compile=True)
    a, b, c = arrays
    return {"numpy": lambda: np.sum(a + b * c), "eager": lambda: model_fn(x, y, z),
            "graph": lambda: graph(x, y, z), "compiled": lambda: compiled(x, y, z)}


def tensorflow_candidates():
    try:
        import tensorflow as real_tf  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001 - optional peer
        skipped("TF eager/graph/compiled", f"TensorFlow is not installed or failed to import: "
                f"{e}")
        return None
    x = real_tf.zeros([100, 100])

    def f(x):
        return real_tf.math.log(2 * real_tf.exp(real_tf.nn.relu(x + 1)))
    g, c = real_tf.function(f), real_tf.function(f, jit_compile=True)
    return {"TF eager": lambda: f(x), "TF graph": lambda: g(x), "TF compiled": lambda: c(x)}


def report(title, res, base="numpy"):
    print(f"\n{title} (µs per call, median)")
    for name, us in res.items():
        print(f"  {name:<16}{us:10.2f}   {us / res[base]:5.2f}x {base}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=9, help="interleaved runs; medians are reported")
    p.add_argument("--number", type=int, default=1000, help="calls per timing")
    args = p.parse_args()
    print(f"numexpr: {'installed' if compiler.numexpr is not None else 'not installed'}; "
          f"jit backend: {compiler.BACKEND[0]}")
    model = interleaved(model_candidates(), args.number, args.repeats)
    report("SequentialModel on [60, 28, 28]", model)
    fn = interleaved(seed001_candidates(), args.number * 5, args.repeats)
    report("log(2*exp(relu(x+1))) on [100, 100]", fn)
    xla = interleaved(xla_candidates(), max(args.number // 10, 10), args.repeats)
    report("XLA example reduce_sum(x + y*z) on [512, 512]", xla)
    peers = tensorflow_candidates()
    if peers is not None:
        report("TensorFlow, log(2*exp(relu(x+1)))", interleaved(peers, args.number, args.repeats),
               base="TF eager")
    else:
        print("\nTensorFlow: not installed (the talk saw 0.007 ms graph, 0.005 ms compiled)")
    goals = [
        ("model: graph <= 1.3x NumPy floor", model["graph"] / model["numpy"], 1.3, "<="),
        ("model: graph <= eager", model["graph"] / model["eager"], 1.0, "<="),
        ("log-exp-relu: graph <= eager", fn["graph"] / fn["eager"], 1.0, "<="),
        ("log-exp-relu: compiled speed-up over graph", fn["graph"] / fn["compiled"], 1.25, ">="),
    ]
    print("\nratios")
    for label, value, target, sense in goals:
        ok = value <= target if sense == "<=" else value >= target
        print(f"  {label:<42}{value:6.2f}   goal {sense} {target}  {'ok' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
