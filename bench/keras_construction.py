"""The cost of building functional Keras models, and of their first `fit` step,
before and after symbolic construction (a layer call on `tf.keras.Input` tensors traced once
with the ops' shape rules instead of run twice on made-up batches).

    python bench/keras_construction.py [--base /tmp/wt-base] [--rounds 3] [--size 96]

Models: MobileNetV2 and ResNet50 (weights=None, inputs size x size x 3, 10 classes) and a
6-block Transformer encoder written with the functional API (Embedding, MultiHeadAttention
called on KerasTensors, LayerNormalization, a feed-forward block; Input(shape=(32,)), since
the base cannot build it on Input(shape=(None,))).
Each measurement is one fresh process (imports excluded) that builds the model and runs its
first `fit` step (compile settings made before; the step traces and runs one batch), then
does both again on a second model: "cold" figures include the process's first uses of
kernels (a JIT-compiled softmax is loaded on its first call), "warm" ones are the
construction and tracing work alone. A kernel's first use lands in whichever step runs it
first: the base runs the layers at construction (on batches of 2, the size the CNNs' fit
step uses, so their convolutions' algorithm choice is made there too), while symbolic
construction runs no kernel whose shape rule is exact, so those first uses move to the fit
step. "build+fit" (their sum per process) is the figure a user waits for. The base is
another checkout of tensorlite, e.g. main's made with
`git worktree add --detach /tmp/wt-base main`; each process imports tensorlite from its
tree through PYTHONPATH. Rounds interleave the trees (the order alternates each round), so
load from neighbours hits both alike; figures are medians over the rounds, and the ratio is
this tree's over the base's.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ("MobileNetV2", "ResNet50", "Transformer6")
KEYS = ("build_cold_s", "build_warm_s", "first_fit_cold_s", "first_fit_warm_s",
        "build+fit_cold_s", "build+fit_warm_s")


def transformer(tf, blocks=6, vocab=1000, dim=128, heads=4, ff=256, length=32):
    """A 6-block Transformer encoder classifier, functional. Its sequences have a fixed
    length: on Input(shape=(None,)) the base's probing fails (issue 30's first bug)."""
    layers = tf.keras.layers
    inputs = tf.keras.Input(shape=(length,), dtype="int64")
    x = layers.Embedding(vocab, dim)(inputs)
    for _ in range(blocks):
        attended = layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)(x, x)
        x = layers.LayerNormalization()(x + attended)
        hidden = layers.Dense(ff, activation="relu")(x)
        x = layers.LayerNormalization()(x + layers.Dense(dim)(hidden))
    x = layers.GlobalAveragePooling1D()(x)
    return tf.keras.Model(inputs, layers.Dense(2)(x))


def build(tf, name, size):
    if name == "Transformer6":
        return transformer(tf)
    app = getattr(tf.keras.applications, name)
    return app(weights=None, input_shape=(size, size, 3), classes=10,
               classifier_activation=None)


def batch(np, name, size):
    rng = np.random.default_rng(0)
    if name == "Transformer6":
        return rng.integers(1, 1000, size=(4, 32)), rng.integers(0, 2, size=(4,))
    return rng.random((2, size, size, 3), dtype=np.float32), rng.integers(0, 10, size=(2,))


def worker(name, size, clock="wall"):
    """One process's figures: the model built and its first fit step, twice (a fresh model
    each time): "cold" the first time (the process's first uses of kernels and imports
    included), "warm" the second time (the construction and tracing work alone)."""
    import numpy as np  # noqa: PLC0415
    import tensorlite as tf  # noqa: PLC0415 - from the PYTHONPATH of the tree measured
    tf.keras.layers.Dense  # noqa: B018 - the Keras package imported before the clock
    x, y = batch(np, name, size)
    now = time.perf_counter if clock == "wall" else time.process_time
    out = {"tensorlite": os.path.dirname(os.path.dirname(tf.__file__))}
    for when in ("cold", "warm"):
        start = now()
        model = build(tf, name, size)
        built = now()
        model.compile(optimizer="sgd",
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        compiled = now()
        model.fit(x, y, batch_size=len(x), epochs=1, verbose=0)
        fitted = now()
        out[f"build_{when}_s"] = built - start
        out[f"first_fit_{when}_s"] = fitted - compiled
        out[f"build+fit_{when}_s"] = (built - start) + (fitted - compiled)
    return out


def measure(tree, name, size, clock):
    env = dict(os.environ, PYTHONPATH=tree)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name,
                           "--size", str(size), "--clock", clock], capture_output=True,
                          text=True, env=env, cwd=tree, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} in {tree} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if os.path.realpath(result["tensorlite"]) != os.path.realpath(tree):
        raise RuntimeError(f"{tree}'s process imported tensorlite from {result['tensorlite']}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="/tmp/wt-base",
                        help="the checkout to compare with (default /tmp/wt-base)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds (the figures are their medians)")
    parser.add_argument("--size", type=int, default=96, help="image side for the CNNs")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated subset of {', '.join(MODELS)}")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or the process's CPU time (all its threads; "
                             "less moved by other jobs on a loaded machine)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.size, args.clock)))
        return
    if not os.path.isdir(os.path.join(args.base, "tensorlite")):
        parser.error(f"no tensorlite checkout at {args.base}: make one with "
                     f"`git worktree add --detach {args.base} main`")
    trees = {"base": os.path.abspath(args.base), "this": ROOT}
    runs = {(t, m, k): [] for t in trees for m in args.models.split(",")
            for k in KEYS}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for name in args.models.split(","):
            for label in order:
                got = measure(trees[label], name, args.size, args.clock)
                for key in KEYS:
                    runs[(label, name, key)].append(got[key])
    print(f"medians over {args.rounds} interleaved rounds, {args.clock} seconds "
          f"(base: {trees['base']})")
    print(f"{'model':<14}{'what':<17}{'base':>9}{'this':>9}{'this/base':>11}")
    for name in args.models.split(","):
        for key in KEYS:
            base = statistics.median(runs[("base", name, key)])
            this = statistics.median(runs[("this", name, key)])
            print(f"{name:<14}{key[:-2]:<17}{base:>9.3f}{this:>9.3f}{this / base:>11.2f}")


if __name__ == "__main__":
    main()
