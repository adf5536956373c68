"""The augmentation pipeline of the tf.data performance lecture, tensorlite beside TensorFlow:
random flips, brightness, saturation, hue and contrast, `resize` to 224x224 and `/ 255`,
mapped over 160x160 uint8 images, sequentially, with `num_parallel_calls` 1 and 2 (the
map's scaling from 1 to 2 cores: the time with 1 over the time with 2) and AUTOTUNE, each
with `prefetch`, plus the eager cost of each image op alone. The `cpu ms/image` rows are
the process CPU time per image of the sequential pass (what load from other programs
changes least; a system's map runs in its threads, so their CPU counts).

Each system runs in its own process (the same code: `import ... as tf`), interleaved round
by round; the figures are medians of the rounds, and the ratio is the median of the
per-round ratios (lower is better; goal <= 1.0 with AUTOTUNE on 2 cores).

    python bench/augment_pipeline.py [--images 64] [--rounds 5]

TensorFlow runs from TL_BENCH_TF_PYTHON, else the repository's interop venv (.venv-tf, made
by tests/interop/setup_tf_venv.sh); without it its rows are skipped, saying so.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def augment_fn(tf):
    def augment(image, label):
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_flip_up_down(image)
        image = tf.image.random_brightness(image, max_delta=0.1)
        image = tf.image.random_saturation(image, 0.8, 1.2)
        image = tf.image.random_hue(image, 0.05)
        image = tf.image.random_contrast(image, 0.8, 1.2)
        image = tf.image.resize(image, (224, 224))
        return image / 255.0, label
    return augment


def single_ops(tf, image):
    f = tf.cast(image, tf.float32)
    return {
        "resize (bilinear) 160->224": lambda: tf.image.resize(image, (224, 224)),
        "random_flip_left_right": lambda: tf.image.random_flip_left_right(f),
        "random_brightness": lambda: tf.image.random_brightness(f, 0.1),
        "random_saturation": lambda: tf.image.random_saturation(f, 0.8, 1.2),
        "random_hue": lambda: tf.image.random_hue(f, 0.05),
        "random_contrast": lambda: tf.image.random_contrast(f, 0.8, 1.2),
    }


def worker(system, images):
    """Runs in the measured process: prints one JSON line of seconds."""
    if system == "tensorlite":
        sys.path.insert(0, os.path.join(HERE, ".."))
    import importlib  # noqa: PLC0415
    tf = importlib.import_module(system)
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (images, 160, 160, 3)).astype(np.uint8)
    labels = np.arange(images, dtype=np.int64)
    out = {}
    augment = augment_fn(tf)
    for mode, calls in (("sequential", None), ("parallel 1", 1), ("parallel 2", 2),
                        ("autotune", tf.data.AUTOTUNE)):
        ds = tf.data.Dataset.from_tensor_slices((pixels, labels)).map(
            augment, num_parallel_calls=calls).prefetch(tf.data.AUTOTUNE)
        for _ in ds.take(4):  # traces and warms up
            pass
        start, cpu = time.perf_counter(), time.process_time()
        for _ in ds:
            pass
        out[mode] = time.perf_counter() - start
        if calls is None:
            out["cpu ms/image (sequential)"] = (time.process_time() - cpu) / images
    image = tf.constant(pixels[0])
    for name, fn in single_ops(tf, image).items():
        fn()
        times = []
        for _ in range(30):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        out[name] = statistics.median(times)
    print(json.dumps(out))


def tf_python():
    for py in (os.environ.get("TL_BENCH_TF_PYTHON"),
               os.path.join(HERE, "..", ".venv-tf", "bin", "python")):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import tensorflow"], capture_output=True, check=False).returncode == 0:
            return py
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=64, help="images per pipeline pass")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians)")
    parser.add_argument("--worker", choices=["tensorlite", "tensorflow"],
                        help=argparse.SUPPRESS)  # the measured process
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.images)
        return
    systems = {"tensorlite": sys.executable}
    tf_py = tf_python()
    if tf_py:
        systems["tensorflow"] = tf_py
    else:
        print("skipping TensorFlow: set TL_BENCH_TF_PYTHON or run "
              "tests/interop/setup_tf_venv.sh .venv-tf")
    runs = {s: [] for s in systems}
    for r in range(args.rounds):
        for system, py in systems.items():
            proc = subprocess.run([py, __file__, "--worker", system, "--images",
                                   str(args.images)], capture_output=True, text=True,
                                  env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=False)
            if proc.returncode != 0:
                print(f"  {system} failed: {proc.stderr.strip().splitlines()[-1:]}")
                continue
            runs[system].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"  round {r + 1}: {system} done", flush=True)
    for system in systems:  # the map's scaling from 1 to 2 cores, per round
        for x in runs[system]:
            x["scaling 1->2 (higher wins)"] = x["parallel 1"] / x["parallel 2"]
    keys = list(next((v[0] for v in runs.values() if v), {}).keys())
    print(f"\n{args.images} images of 160x160x3, medians of {args.rounds} interleaved rounds "
          f"({os.cpu_count()} cores); ms per pass (pipelines) or per call (ops)")
    print(f"  {'':28s}" + "".join(f"{s:>14s}" for s in systems) + f"{'tl/tf':>8s}")
    for key in keys:
        line = f"  {key:28s}"
        for s in systems:
            unit = 1 if key.startswith("scaling") else 1e3  # a ratio, else seconds
            line += f"{statistics.median(x[key] for x in runs[s]) * unit:14.2f}" \
                if runs[s] else f"{'-':>14s}"
        if runs.get("tensorlite") and runs.get("tensorflow"):
            ratio = statistics.median(a[key] / b[key] for a, b in zip(runs["tensorlite"],
                                                                      runs["tensorflow"]))
            line += f"{ratio:8.2f}"
        print(line)


if __name__ == "__main__":
    main()
