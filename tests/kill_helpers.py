"""The crash tests' writer: a forked child saves again and again, each save's variables all
holding its number k, until the parent SIGKILLs it at a random moment after the first save."""
import os
import signal
import time

import numpy as np


def kill_while_saving(variables, save, rng, max_delay):
    """Forks a child that, for k = 1, 2, ..., assigns k to every element of `variables` and
    calls `save()`; kills it with SIGKILL `rng.uniform(0, max_delay)` seconds after its first
    complete save, and reaps it.

    Example:
        >>> kill_while_saving(model.weights, lambda: model.save(path), rng, 0.05)  # doctest: +SKIP
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            for k in range(1, 10 ** 6):
                for v in variables:
                    v.assign(np.full(tuple(v.shape), k, np.float32))
                save()
                if k == 1:
                    os.write(write, b"1")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1", "the writer died before its first save"
    os.close(read)
    time.sleep(rng.uniform(0.0, max_delay))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
