"""tf.saved_model.save / load of a 25M-parameter tf.Module with one tf.function (100 MB of
float32) beside np.save + fsync / np.load of the same arrays, in the same run, interleaved;
and the CIFAR CNN's `model.export` (tracing twice, FunctionDefs, writing) beside its
`.keras` save.

    python bench/saved_model_io.py [--repeats 5] [--params 25000000]

A SavedModel write is a checkpoint write plus the graph: the ratio to np.save + fsync says
what the graph, the protos and the atomic directory swap cost. Medians of the repeats.
"""
import os
import shutil
import statistics
import sys
import tempfile


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from seed_models import generate_model  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_io  # noqa: E402
from model_io import _timed, numpy_io  # noqa: E402
from _cleanup import exit_on_signals  # noqa: E402


class Big(model_io.Big):
    """model_io's 25M-parameter module, with a function to save."""

    @tf.function(input_signature=[tf.TensorSpec([None, 1000], tf.float32)])
    def __call__(self, x):
        return [tf.matmul(x, w) for w in self.w]


def main():
    args = model_io.parse_args(__doc__)
    exit_on_signals()  # SIGTERM too removes the files written
    module = Big(args.params)
    arrays = [v.numpy() for v in module.w]
    cnn = generate_model()
    root = tempfile.mkdtemp(prefix="saved_model_io_")
    npy_dir = os.path.join(root, "npy")
    os.makedirs(npy_dir)

    _, np_save, np_load = numpy_io(arrays, npy_dir)  # np_save: with fsync, as a save is

    times = {k: [] for k in ("np.save+fsync", "sm.save", "np.load", "sm.load", "export",
                             "keras")}
    try:
        for _ in range(args.repeats):
            times["np.save+fsync"].append(_timed(np_save))
            times["sm.save"].append(_timed(lambda: tf.saved_model.save(
                module, os.path.join(root, "big"))))
            times["np.load"].append(_timed(np_load))
            times["sm.load"].append(_timed(lambda: tf.saved_model.load(
                os.path.join(root, "big"))))
            times["export"].append(_timed(lambda: cnn.export(os.path.join(root, "cnn"),
                                                             verbose=False)))
            times["keras"].append(_timed(lambda: cnn.save(os.path.join(root, "cnn.keras"))))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    size = sum(a.nbytes for a in arrays) / 1e6
    print(f"{size:.0f} MB module, medians of {args.repeats} (ms):")
    print(f"  save: np.save+fsync {med['np.save+fsync']:.1f}  tf.saved_model.save "
          f"{med['sm.save']:.1f}  ratio {med['sm.save'] / med['np.save+fsync']:.2f}x")
    print(f"  load: np.load {med['np.load']:.1f}  tf.saved_model.load {med['sm.load']:.1f}  "
          f"ratio {med['sm.load'] / med['np.load']:.2f}x")
    print(f"  CIFAR CNN (1.25M params): model.export {med['export']:.1f}  "
          f"model.save('.keras') {med['keras']:.1f}  ratio {med['export'] / med['keras']:.2f}x")


if __name__ == "__main__":
    main()
