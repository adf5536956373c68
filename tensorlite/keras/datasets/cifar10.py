"""`tf.keras.datasets.cifar10.load_data()` from the CIFAR-10 python batches
(`cifar-10-batches-py/data_batch_1..5`, `test_batch`: pickled dicts with b"data" uint8
[N, 3072] channel-major rows and b"labels"), downloaded once from the CIFAR page into the
Keras cache, checked against Keras's SHA-256 and unpacked there.

The batches exist only as pickles, so this loader must unpickle. It does so with an
allow-list: only NumPy's array reconstruction and plain containers resolve, and a pickle
that names any other callable is a DataLossError before anything runs.
"""
import os

import numpy as np

from tensorlite.framework import errors
from tensorlite.keras.datasets._cache import fetch
from tensorlite.keras.datasets.npz import ArraysOnlyUnpickler

DIRNAME = "cifar-10-batches-py"
ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
FILE_HASH = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"


def load_batch(path, label_key="labels"):
    """(data [N,3,32,32] uint8, labels [N]) from one python batch file (an unpickle
    restricted to arrays and plain containers)."""
    with open(path, "rb") as f:
        try:
            d = ArraysOnlyUnpickler(f, encoding="bytes").load()
            if not isinstance(d, dict):
                raise TypeError(f"expected a dict, got {type(d).__name__}")
        except Exception as e:  # noqa: BLE001 - any unpickling failure means a bad file
            raise errors.DataLossError(None, None, f"{path} is not a CIFAR batch: {e}") from None
    d = {k.decode() if isinstance(k, bytes) else k: v for k, v in d.items()}
    data = np.asarray(d["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
    labels = np.asarray(d[label_key], dtype=np.uint8)
    return data, labels


def load_data():
    """((x_train, y_train), (x_test, y_test)): uint8 [N,32,32,3] images, [N,1] labels.

    The batch files are pickles: they are unpickled with an allow-list of NumPy's array
    reconstruction only (see `load_batch`), so a crafted file cannot run code."""
    root = fetch(DIRNAME, ORIGIN, FILE_HASH, untar=True)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    missing = [n for n in names if not os.path.exists(os.path.join(root, n))]
    if missing:
        raise errors.DataLossError(None, None, f"cifar10: {missing} are missing from {root}; "
                                               f"delete it to download the archive again")
    parts = [load_batch(os.path.join(root, n)) for n in names[:5]]
    x_train = np.concatenate([p[0] for p in parts]).transpose(0, 2, 3, 1)
    y_train = np.concatenate([p[1] for p in parts]).reshape(-1, 1)
    x_test, y_test = load_batch(os.path.join(root, "test_batch"))
    return (x_train, y_train), (x_test.transpose(0, 2, 3, 1), y_test.reshape(-1, 1))
