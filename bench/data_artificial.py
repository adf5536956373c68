"""The ArtificialDataset benchmark of TensorFlow's tf.data performance guide: naive,
prefetch, sequential interleave and parallel interleave, each beside its ideal time computed
from the sleeps.

The ideal is what the variant would take with zero framework overhead: a discrete-event
simulation of the same schedule (the same prefetching, the same cycle slots and look-ahead,
the same per-slot buffers) in which only the sleeps take time.

    python bench/data_artificial.py [--repeats 5]

Goal (issue 3): every variant within 10% of its ideal (median of the repeats).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402

OPEN, READ, TRAIN, EPOCHS = 0.03, 0.015, 0.01, 2


class ArtificialDataset(tf.data.Dataset):
    def _generator(num_samples):
        # Opening the file
        time.sleep(OPEN)
        for sample_idx in range(num_samples):
            # Reading data (line, record) from the file
            time.sleep(READ)
            yield (sample_idx,)

    def __new__(cls, num_samples=3):
        return tf.data.Dataset.from_generator(
            cls._generator,
            output_types=tf.dtypes.int64,
            output_shapes=(1,),
            args=(num_samples,)
        )


def benchmark(dataset, num_epochs=EPOCHS):
    start_time = time.perf_counter()
    for _ in range(num_epochs):
        for _sample in dataset:
            time.sleep(TRAIN)  # Performing a training step
    return time.perf_counter() - start_time


# -- ideals ---------------------------------------------------------------------------------
def ideal_naive(samples=3):
    return EPOCHS * (OPEN + samples * (READ + TRAIN))


def ideal_prefetch(samples=3):
    ready = [OPEN + READ * (i + 1) for i in range(samples)]
    t = 0.0
    for r in ready:
        t = max(t, r) + TRAIN
    return EPOCHS * t


def ideal_sequential_interleave(n=5):
    return EPOCHS * sum(OPEN + k * (READ + TRAIN) for k in range(n))


class _Producer:
    """A generator producing k samples from time `start`, into a buffer of `cap`."""

    def __init__(self, k, start, cap):
        self.k, self.start, self.cap = k, start, cap
        self.consumed = []  # consumption times

    def ready(self, j):
        """Time item j (j == k: the end marker) is in the buffer. Fetch i starts once item
        i - cap left the buffer; only called after the consumer took items < j."""
        t = self.start + OPEN
        for i in range(j + 1):
            if i >= self.cap:
                t = max(t, self.consumed[i - self.cap])
            if i < self.k:
                t += READ
        return t


def ideal_parallel_interleave(n=5, cycle=None, block=1):
    """Simulates tensorlite's parallel interleave schedule with zero overhead: `cycle` slots
    (AUTOTUNE: the core count), as many inputs opened ahead, buffers of `cap` per input."""
    from tensorlite.data.parallel_map import cpu_count  # noqa: PLC0415
    cycle = cycle or cpu_count()
    cap = max(2, 2 * block)
    total = 0.0
    for _ in range(EPOCHS):
        now = 0.0
        inputs = iter(range(n))
        slots, waiting, taken, pos = [None] * cycle, [], [0] * cycle, 0
        lookahead = cycle

        def open_next(t):
            k = next(inputs, None)
            return None if k is None else [_Producer(k, t, cap), 0]

        def top_up(t):
            while len(waiting) < lookahead:
                p = open_next(t)
                if p is None:
                    break
                waiting.append(p)
        exhausted = False
        while True:
            if all(s is None for s in slots) and exhausted and not waiting:
                break
            if slots[pos] is None:
                slots[pos] = waiting.pop(0) if waiting else open_next(now)
                top_up(now)
                if slots[pos] is None:
                    exhausted = True
                    if not waiting and all(s is None for s in slots):
                        break
                    pos = (pos + 1) % cycle
                    continue
            prod, j = slots[pos]
            now = max(now, prod.ready(j))
            if j >= prod.k:  # end marker
                slots[pos] = None
                pos = (pos + 1) % cycle
                continue
            prod.consumed.append(now)
            slots[pos][1] += 1
            now += TRAIN
            taken[pos] += 1
            if taken[pos] >= block:
                taken[pos] = 0
                pos = (pos + 1) % cycle
        total += now
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5,
                        help="interleaved runs; medians are reported")
    args = parser.parse_args()
    variants = [
        ("naive", lambda: ArtificialDataset(), ideal_naive()),
        ("prefetch(AUTOTUNE)",
         lambda: ArtificialDataset().prefetch(tf.data.experimental.AUTOTUNE), ideal_prefetch()),
        ("sequential interleave",
         lambda: tf.data.Dataset.range(5).interleave(ArtificialDataset),
         ideal_sequential_interleave()),
        ("parallel interleave",
         lambda: tf.data.Dataset.range(5).interleave(
             ArtificialDataset, num_parallel_calls=tf.data.experimental.AUTOTUNE),
         ideal_parallel_interleave()),
    ]
    print(f"{'variant':24s} {'median s':>9s} {'ideal s':>8s} {'ratio':>6s}  (goal <= 1.10)")
    worst = 0.0
    for name, make, ideal in variants:
        times = [benchmark(make()) for _ in range(args.repeats)]
        med = statistics.median(times)
        worst = max(worst, med / ideal)
        print(f"{name:24s} {med:9.4f} {ideal:8.4f} {med / ideal:6.3f}")
    print(f"worst ratio to ideal: {worst:.3f}")


if __name__ == "__main__":
    main()
