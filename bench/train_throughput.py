"""Training throughput: tensorlite beside TensorFlow and PyTorch, each in its own process,
interleaved, on 1 thread and on the default threads (bench/train_workers.py runs one).

  * the CIFAR-10 CNN of the notes "Structure of Deep Learning Frameworks" (RMSprop,
    batch 32), an MLP 784-128-10 (Adam, batch 128) and a small LSTM (20 steps x 16
    features -> 32 units -> 10, Adam, batch 64): images/s (median step), the ratio to each
    peer, and the first two steps (build, trace, graph
    passes, code generation, convolution algorithm timing, the calls) beyond two steady ones.
  * --numpy-loop: the MLP's Keras `fit` beside a hand-written NumPy loop doing the same math.

Data is synthetic with CIFAR/MNIST shapes (speed does not depend on the pixels). The peers
run where installed: PyTorch in this Python, TensorFlow in this Python or the one named by
TL_BENCH_TF_PYTHON (tensorflow-cpu in its own venv).

    python bench/train_throughput.py [--repeats 3] [--batches 30] [--models cnn,mlp,lstm]
    python bench/train_throughput.py --contended --models cnn   # a second job holds a core

TensorFlow beside it, in a venv of its own:
    python3 -m venv /tmp/tf && /tmp/tf/bin/pip install tensorflow-cpu
    TL_BENCH_TF_PYTHON=/tmp/tf/bin/python python bench/train_throughput.py

Goals (issue 18): the CNN at >= 1.0x TensorFlow's images/s on 1 and 2 threads on a quiet
machine, and no worse than 1.5x behind it (>= 0.67x) with --contended, where the bench
itself runs a bounded busy process (one spinning Python, at most --contend-seconds) for the
whole comparison and measures the default thread setting only; the first step's extra cost
(trace, passes, codegen) under 0.5 s for the CNN.
(issue 4): the MLP within 1.2x of the NumPy loop.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _report import skipped  # noqa: E402


def mnist_like(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 784), dtype=np.float32), rng.integers(0, 10, n).astype(np.int64)


# -- the NumPy reference: same model, loss and Adam update --------------------------------
def numpy_mlp_epoch(x, y, batch, seed=0):
    rng = np.random.default_rng(seed)
    lim1, lim2 = np.sqrt(6 / (784 + 128)), np.sqrt(6 / (128 + 10))
    params = [rng.uniform(-lim1, lim1, (784, 128)).astype(np.float32),
              np.zeros(128, np.float32),
              rng.uniform(-lim2, lim2, (128, 10)).astype(np.float32),
              np.zeros(10, np.float32)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-7
    order = rng.permutation(len(x))
    t = 0
    start = time.perf_counter()
    for i in range(0, len(x), batch):
        idx = order[i:i + batch]
        xb, yb = x[idx], y[idx]
        w1, c1, w2, c2 = params
        z = xb @ w1 + c1
        h = np.maximum(z, 0)
        logits = h @ w2 + c2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        n = len(idx)
        dlogits = p
        dlogits[np.arange(n), yb] -= 1
        dlogits /= n
        grads = [None] * 4
        grads[2] = h.T @ dlogits
        grads[3] = dlogits.sum(0)
        dh = dlogits @ w2.T
        dh[z <= 0] = 0
        grads[0] = xb.T @ dh
        grads[1] = dh.sum(0)
        t += 1
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for k in range(4):
            m[k] *= b1
            m[k] += (1 - b1) * grads[k]
            v[k] *= b2
            v[k] += (1 - b2) * grads[k] ** 2
            params[k] -= alpha * m[k] / (np.sqrt(v[k]) + eps)
    return time.perf_counter() - start


def tensorlite_mlp_epoch(x, y, batch):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
        tf.keras.layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    start = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
    return time.perf_counter() - start


HERE = os.path.dirname(os.path.abspath(__file__))


def peer_pythons():
    """system -> the Python that runs it, for the systems installed here."""
    out = {"tensorlite": sys.executable}
    probe = "import importlib.util as u, sys; sys.exit(u.find_spec(sys.argv[1]) is None)"
    if subprocess.run([sys.executable, "-c", probe, "torch"], check=False).returncode == 0:
        out["torch"] = sys.executable
    for py in (os.environ.get("TL_BENCH_TF_PYTHON"), sys.executable):
        if py and subprocess.run([py, "-c", probe, "tensorflow"],
                                 check=False).returncode == 0:
            out["tensorflow"] = py
            break
    for system, how in (("torch", "pip install torch"),
                        ("tensorflow", "pip install tensorflow-cpu, or set "
                                       "TL_BENCH_TF_PYTHON to a Python that has it")):
        if system not in out:
            skipped(f"{system} rows", f"{system} is not installed ({how})")
    return out


def one_run(python, system, model, threads, batches):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([python, os.path.join(HERE, "train_workers.py"), system, model,
                           "--threads", str(threads), "--batches", str(batches)],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        print(f"  {system} {model} failed: {proc.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


_SPIN = "import time\nend = time.time() + {s}\nwhile time.time() < end: pass"


def compare(models, repeats, batches, settings=(1, 0)):
    """Runs every (threads, model, system) once per repeat, interleaved; prints medians.
    settings: thread counts, 0 meaning each system's default."""
    pythons = peer_pythons()
    results = {}
    for _ in range(repeats):
        for threads in settings:
            for model in models:
                for system, py in pythons.items():
                    r = one_run(py, system, model, threads, batches)
                    if r is not None:
                        results.setdefault((threads, model, system), []).append(r)
                        print(f"  ran {system} {model} threads={threads or 'default'}: "
                              f"{r['images_per_s']:.0f}/s, first two steps "
                              f"{r['first_steps_s']:.2f} s", flush=True)
    print(f"systems: {', '.join(pythons)}; medians of {repeats} interleaved runs (the machine "
          f"may be loaded: read the ratios)")
    for threads in settings:
        label = "1 thread" if threads == 1 else f"default threads ({os.cpu_count()} cores)"
        print(f"\n{label}")
        for model in models:
            rows = {s: results.get((threads, model, s)) for s in pythons}
            rate = {s: statistics.median(x["images_per_s"] for x in r)
                    for s, r in rows.items() if r}
            line = f"  {model:5s}" + "".join(f"  {s} {v:8.0f}/s" for s, v in rate.items())
            if "tensorlite" in rate:
                line += "".join(f"  tl/{s} {rate['tensorlite'] / v:5.2f}x"
                                for s, v in rate.items() if s != "tensorlite")
            print(line)
            if rows.get("tensorlite"):  # runs next to each other saw about the same load
                pairs = {s: statistics.median(a["images_per_s"] / b["images_per_s"]
                                              for a, b in zip(rows["tensorlite"], r))
                         for s, r in rows.items() if r and s != "tensorlite"}
                if pairs:
                    print("        median of the per-repeat ratios (adjacent runs): " +
                          "  ".join(f"tl/{s} {v:5.2f}x" for s, v in pairs.items()))
            for s, r in rows.items():
                if r:
                    first = statistics.median(x["first_steps_s"] for x in r)
                    extra = statistics.median(x["first_steps_s"] - 2 * x["step_s"] for x in r)
                    print(f"        {s:10s} first two steps {first:6.2f} s, beyond two steady "
                          f"steps {extra:6.2f} s")
    print("\ngoals: CNN tl/tensorflow >= 1.0x (quiet machine); CNN start-up (build, trace, "
          "passes, codegen, first calls) beyond steady steps < 0.5 s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3,
                        help="interleaved runs; medians are reported")
    # Steady steps timed per run: tensorlite picks each kernel's thread count by sampling its
    # first calls (a warm-up, a 1-thread sample, two multi-threaded ones), so at 6 steps most
    # of the median came from sampling (2 threads read 0.48x TF at 6 steps, 0.7x at 30).
    parser.add_argument("--batches", type=int, default=30, help="steady steps timed per run")
    parser.add_argument("--models", default="cnn,mlp,lstm",
                        help="comma-separated models to train (default %(default)s)")
    parser.add_argument("--numpy-loop", action="store_true",
                        help="also time an MLP epoch against a hand-written NumPy loop")
    parser.add_argument("--samples", type=int, default=60000,
                        help="samples per epoch of --numpy-loop")
    parser.add_argument("--contended", action="store_true",
                        help="run the default-threads comparison beside a busy process")
    parser.add_argument("--contend-seconds", type=float, default=600,
                        help="the busy process stops by itself after this long")
    args = parser.parse_args()
    if args.contended:
        spinner = subprocess.Popen([sys.executable, "-c",
                                    _SPIN.format(s=args.contend_seconds)])
        try:
            print("contended: a spinning process holds about one core throughout")
            compare(args.models.split(","), args.repeats, args.batches, settings=(0,))
            print("goal (contended): CNN tl/tensorflow >= 0.67x (no worse than 1.5x behind)")
        finally:
            spinner.kill()
            spinner.wait()
    else:
        compare(args.models.split(","), args.repeats, args.batches)
    if not args.numpy_loop:
        return
    x, y = mnist_like(args.samples)
    print(f"\nMLP 784-128-10, Adam, {args.samples} samples (seconds per epoch, median of "
          f"{args.repeats})")
    for batch in (32, 256):
        ref = statistics.median(numpy_mlp_epoch(x, y, batch) for _ in range(args.repeats))
        tl = statistics.median(tensorlite_mlp_epoch(x, y, batch) for _ in range(args.repeats))
        print(f"  batch {batch:3d}: NumPy loop {ref:6.2f} s   tensorlite fit {tl:6.2f} s   "
              f"ratio {tl / ref:5.2f}x (goal <= 1.2)")


if __name__ == "__main__":
    main()
