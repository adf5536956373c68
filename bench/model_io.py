"""Saving and loading a 25M-parameter model (100 MB of float32) in TensorFlow's checkpoint
format and as a Keras `.keras` archive, beside `np.save` of the same arrays, in the same
run, interleaved; and the peak memory allocated while saving (tracemalloc sees NumPy's
buffers), as a multiple of the model's size.

    python bench/model_io.py [--repeats 5] [--params 25000000]

Goals (issue 13): checkpoint save and restore within 1.5x of np.save/np.load of the same
arrays (a checkpoint fsyncs its files, so np.save + fsync is timed too, the fair
reference); peak extra memory while saving under 1.2x the model's size. Timings on a
shared machine are noisy: medians, with the reference measured in the same run.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cleanup import exit_on_signals  # noqa: E402


class Big(tf.Module):
    def __init__(self, params, layers=5):
        super().__init__()
        rows = 1000
        cols = params // (layers * rows)
        rng = np.random.default_rng(0)
        self.w = [tf.Variable(rng.standard_normal((rows, cols), dtype=np.float32))
                  for _ in range(layers)]


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _peak(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def numpy_io(arrays, npy_dir):
    """The reference: np.save, np.save + fsync (what a crash-safe save must also do) and
    np.load of the same arrays, one .npy file each in npy_dir."""
    def np_save():
        for i, a in enumerate(arrays):
            np.save(os.path.join(npy_dir, f"{i}.npy"), a)

    def np_save_durable():
        for i, a in enumerate(arrays):
            path = os.path.join(npy_dir, f"{i}.npy")
            np.save(path, a)
            with open(path, "rb+") as f:
                os.fsync(f.fileno())

    def np_load():
        for i in range(len(arrays)):
            np.load(os.path.join(npy_dir, f"{i}.npy"))
    return np_save, np_save_durable, np_load


def _keras_model(params):
    units = int((params / 2) ** 0.5)
    model = tf.keras.Sequential([tf.keras.Input((units,)), tf.keras.layers.Dense(units),
                                 tf.keras.layers.Dense(units)])
    return model


def parse_args(doc):
    """--repeats and --params, shared with bench/saved_model_io.py."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="interleaved runs")
    ap.add_argument("--params", type=int, default=25_000_000,
                    help="parameters of the module saved (float32)")
    return ap.parse_args()


def main():
    args = parse_args(__doc__)
    exit_on_signals()  # SIGTERM too removes the files written
    module = Big(args.params)
    arrays = [v.numpy() for v in module.w]
    size = sum(a.nbytes for a in arrays)
    ckpt = tf.train.Checkpoint(model=module)
    keras_model = _keras_model(args.params)
    keras_size = sum(w.numpy().nbytes for w in keras_model.weights)
    root = tempfile.mkdtemp(prefix="model_io_")
    prefix, npy_dir = os.path.join(root, "ckpt"), os.path.join(root, "npy")
    keras_path = os.path.join(root, "m.keras")
    os.makedirs(npy_dir)

    np_save, np_save_durable, np_load = numpy_io(arrays, npy_dir)

    times = {k: [] for k in ("np.save", "np.save+fsync", "ckpt.write", "np.load", "ckpt.read",
                             "keras save", "keras load")}
    try:
        for _ in range(args.repeats):  # interleaved: each repeat times every variant
            times["np.save"].append(_timed(np_save))
            times["np.save+fsync"].append(_timed(np_save_durable))
            times["ckpt.write"].append(_timed(lambda: ckpt.write(prefix)))
            times["np.load"].append(_timed(np_load))
            times["ckpt.read"].append(_timed(lambda: ckpt.read(prefix)))
            times["keras save"].append(_timed(lambda: keras_model.save(keras_path)))
            times["keras load"].append(_timed(lambda: tf.keras.models.load_model(keras_path)))
        peak_np = _peak(np_save)
        peak_ckpt = _peak(lambda: ckpt.write(prefix))
        peak_keras = _peak(lambda: keras_model.save(keras_path))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"model: {size / 1e6:.0f} MB in {len(arrays)} float32 variables "
          f"({args.params / 1e6:.0f}M parameters); medians of {args.repeats}")
    print(f"  save:    np.save {med['np.save'] * 1e3:7.1f} ms   checkpoint write "
          f"{med['ckpt.write'] * 1e3:7.1f} ms   ratio {med['ckpt.write'] / med['np.save']:.2f}x"
          f" (goal <= 1.5x)")
    print(f"           np.save + fsync (durable, as a checkpoint is) "
          f"{med['np.save+fsync'] * 1e3:7.1f} ms   ratio "
          f"{med['ckpt.write'] / med['np.save+fsync']:.2f}x")
    print(f"  load:    np.load {med['np.load'] * 1e3:7.1f} ms   checkpoint read  "
          f"{med['ckpt.read'] * 1e3:7.1f} ms   ratio {med['ckpt.read'] / med['np.load']:.2f}x"
          f" (goal <= 1.5x)")
    print(f"  peak memory allocated while saving: np.save {peak_np / size:.2f}x, checkpoint "
          f"{peak_ckpt / size:.2f}x the model's size (goal < 1.2x)")
    print(f"  .keras archive ({keras_size / 1e6:.0f} MB model): save "
          f"{med['keras save'] * 1e3:.1f} ms, load {med['keras load'] * 1e3:.1f} ms, peak "
          f"memory while saving {peak_keras / keras_size:.2f}x the model's size")


if __name__ == "__main__":
    main()
