"""Parallel map throughput: sequential versus num_parallel_calls=AUTOTUNE, for
  * a pure-Python CPU-bound function (~1 ms per element),
  * a NumPy-heavy function that releases the GIL (a single-threaded sort),
  * an image augmentation (flip, crop, scale a uint8 224x224x3 array: large and cheap),
beside the ceiling of two plain worker processes (multiprocessing.Pool) on the same function,
and beside tf.data / a PyTorch DataLoader / Grain when they are installed.

    python bench/data_parallel_map.py [--elements 400] [--repeats 3] [--no-contended]

The contended case repeats the pure-Python function while the bench itself runs a bounded
busy process pinned to one core (at most 120 s, stopped at the end): AUTOTUNE must then
stay at or above its own sequential speed (it falls back to inline when its parallel plan
measures slower; issue 10), printed beside the two-process ceiling under the same load.

Goals (issue 3, 2 cores): pure-Python and NumPy-heavy at least 1.8x sequential, or at least
90% of the two-process ceiling measured in the same run; augmentation at least 1.5x and
ahead of every peer measured in the same run.
"""
import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _report import skipped  # noqa: E402
from tensorlite.data.blas_threads import limit_blas_threads  # noqa: E402

SORT_N = 300_000
_IMAGES = None


def pure_python(i):
    s = 0
    for k in range(25_000):
        s += (k * int(i)) % 7
    return s


def numpy_heavy(i):
    a = np.random.default_rng(int(i)).random(SORT_N)
    a.sort()
    return a[:4].copy()


def images(n):
    global _IMAGES
    if _IMAGES is None or len(_IMAGES) < n:
        _IMAGES = np.random.default_rng(0).integers(0, 255, (n, 224, 224, 3), dtype=np.uint8)
    return _IMAGES[:n]


def augment_np(img):
    img = img[:, ::-1]  # flip left-right
    img = img[16:208, 16:208]  # crop
    return img.astype(np.float32) * (1.0 / 255.0)  # scale


# -- tensorlite -----------------------------------------------------------------------------
def tl_dataset(kind, n, parallel):
    calls = tf.data.AUTOTUNE if parallel else None
    if kind == "augment":
        ds = tf.data.Dataset.from_tensor_slices(images(n))
        return ds.map(lambda x: augment_np(x.numpy()), num_parallel_calls=calls)
    fn = pure_python if kind == "python" else numpy_heavy
    return tf.data.Dataset.range(n).map(lambda x: np.asarray(fn(int(x))), num_parallel_calls=calls)


def run_tl(kind, n, parallel):
    ds = tl_dataset(kind, n, parallel)
    t0 = time.perf_counter()
    count = sum(1 for _ in ds)
    elapsed = time.perf_counter() - t0
    assert count == n
    return n / elapsed, ds


# -- the two-process ceiling ----------------------------------------------------------------
def _pool_init():
    limit_blas_threads(1)


def _augment_index(i):
    return augment_np(images(int(i) + 1)[int(i)])


def run_pool(kind, n):
    fn = {"python": pure_python, "numpy": numpy_heavy, "augment": _augment_index}[kind]
    if kind == "augment":
        images(n)  # created before the fork: workers read it without pickling
    with mp.get_context("fork").Pool(2, initializer=_pool_init) as pool:
        pool.map(fn, range(4))  # warm up
        t0 = time.perf_counter()
        for _ in pool.imap(fn, range(n), chunksize=4):
            pass
        return n / (time.perf_counter() - t0)


# -- peers (optional) -----------------------------------------------------------------------
def run_peers(kind, n):
    out = {}
    try:
        import tensorflow as real_tf  # noqa: PLC0415
        fn = {"python": pure_python, "numpy": numpy_heavy}.get(kind)
        if kind == "augment":
            ds = real_tf.data.Dataset.from_tensor_slices(images(n)).map(
                lambda x: real_tf.image.convert_image_dtype(
                    real_tf.image.crop_to_bounding_box(real_tf.image.flip_left_right(x),
                                                       16, 16, 192, 192), real_tf.float32),
                num_parallel_calls=real_tf.data.AUTOTUNE)
        else:
            ds = real_tf.data.Dataset.range(n).map(
                lambda x: real_tf.numpy_function(lambda v: np.asarray(fn(v)), [x],
                                                 real_tf.float64 if kind == "numpy" else
                                                 real_tf.int64),
                num_parallel_calls=real_tf.data.AUTOTUNE)
        t0 = time.perf_counter()
        for _ in ds:
            pass
        out["tf.data AUTOTUNE"] = n / (time.perf_counter() - t0)
    except ImportError as e:
        skipped("tf.data AUTOTUNE", f"TensorFlow is not installed: {e}")
    try:
        import torch.utils.data as tud  # noqa: PLC0415

        class Items(tud.Dataset):
            def __len__(self):
                return n

            def __getitem__(self, i):
                if kind == "augment":
                    return augment_np(images(n)[i])
                return np.asarray(pure_python(i) if kind == "python" else numpy_heavy(i))
        images(n) if kind == "augment" else None
        loader = tud.DataLoader(Items(), batch_size=None, num_workers=2)
        t0 = time.perf_counter()
        for _ in loader:
            pass
        out["PyTorch DataLoader x2"] = n / (time.perf_counter() - t0)
    except ImportError as e:
        skipped("PyTorch DataLoader x2", f"PyTorch is not installed: {e}")
    try:
        import grain.python as grain  # noqa: PLC0415

        class Src:
            def __len__(self):
                return n

            def __getitem__(self, i):
                return i

        class Fn(grain.MapTransform):
            def map(self, i):
                if kind == "augment":
                    return augment_np(images(n)[i])
                return np.asarray(pure_python(i) if kind == "python" else numpy_heavy(i))
        loader = grain.DataLoader(data_source=Src(), operations=[Fn()],
                                  sampler=grain.IndexSampler(n, grain.NoSharding(),
                                                             shuffle=False, num_epochs=1),
                                  worker_count=2)
        t0 = time.perf_counter()
        for _ in loader:
            pass
        out["Grain x2"] = n / (time.perf_counter() - t0)
    except ImportError as e:
        skipped("Grain x2", f"grain is not installed: {e}")
    return out


def _busy(deadline):
    """A bounded CPU hog on core 0 (the contention of another program)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    while time.time() < deadline:
        sum(range(10_000))


def contended(n, repeats):
    hog = mp.get_context("fork").Process(target=_busy, args=(time.time() + 120,),
                                         daemon=True)
    hog.start()
    try:
        seqs, pars, ceilings, choice = [], [], [], ""
        for r in range(repeats):  # interleaved: the load is the same for all three
            for parallel in ((False, True) if r % 2 == 0 else (True, False)):  # order too
                rate, ds = run_tl("python", n, parallel)
                if parallel:
                    pars.append(rate)
                    choice = ds.explain(print_fn=None).splitlines()[1].split("[", 1)[-1]
                else:
                    seqs.append(rate)
            ceilings.append(run_pool("python", n))
    finally:
        hog.terminate()
        hog.join()
    seq, par, ceiling = (statistics.median(v) for v in (seqs, pars, ceilings))
    vs_seq = statistics.median(p / s for p, s in zip(pars, seqs))
    print("pure-Python ~1 ms, contended (a busy process on core 0):")
    print(f"  sequential              {seq:9.1f}")
    print(f"  AUTOTUNE                {par:9.1f}   {vs_seq:5.2f}x sequential (goal >= "
          f"1.0), {par / ceiling:5.2f} of the 2-process ceiling")
    print(f"  2 plain processes       {ceiling:9.1f}   {ceiling / seq:5.2f}x")
    print(f"  AUTOTUNE chose: {choice.rstrip(']')}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=400, help="elements per run")
    parser.add_argument("--repeats", type=int, default=3,
                        help="interleaved runs; medians are reported")
    parser.add_argument("--no-contended", action="store_true",
                        help="skip the runs beside a busy process")
    parser.add_argument("--only", default="python,numpy,augment",
                        help="comma-separated map functions to time (default %(default)s)")
    args = parser.parse_args()
    n = args.elements
    limit_blas_threads(1)  # the NumPy function must not be blurred by BLAS threads
    print(f"{os.cpu_count()} cores; {n} elements; medians of {args.repeats} runs "
          f"(elements/s)\n")
    for kind, label in (("python", "pure-Python ~1 ms"), ("numpy", "NumPy sort (no GIL)"),
                        ("augment", "augment uint8 224x224x3")):
        if kind not in args.only.split(","):
            continue
        seqs, pars, ceilings, choice = [], [], [], ""
        for _ in range(args.repeats):  # interleaved: a load swing hits all three alike
            seqs.append(run_tl(kind, n, False)[0])
            rate, ds = run_tl(kind, n, True)
            pars.append(rate)
            choice = ds.explain(print_fn=None).splitlines()[1].split("[", 1)[-1]
            ceilings.append(run_pool(kind, n))
        seq, par, ceiling = (statistics.median(v) for v in (seqs, pars, ceilings))
        # the ratio of each run's AUTOTUNE to the ceiling measured beside it, then the median
        share = statistics.median(p / c for p, c in zip(pars, ceilings))
        print(f"{label}:")
        print(f"  sequential              {seq:9.1f}")
        print(f"  AUTOTUNE                {par:9.1f}   {par / seq:5.2f}x sequential, "
              f"{share:5.2f} of the 2-process ceiling (median of per-run ratios)")
        print(f"  2 plain processes       {ceiling:9.1f}   {ceiling / seq:5.2f}x")
        for peer, rate in run_peers(kind, n).items():
            print(f"  {peer:22s}  {rate:9.1f}   {rate / seq:5.2f}x")
        print(f"  AUTOTUNE chose: {choice.rstrip(']')}\n")
    if not args.no_contended:
        contended(n, args.repeats)


if __name__ == "__main__":
    main()
