"""`tf.keras.datasets.cifar100.load_data(label_mode="fine")`: the CIFAR-100 python files
(`cifar-100-python/train`, `test`), downloaded once into the Keras cache, checked against
Keras's SHA-256 and read with the same arrays-only unpickler as CIFAR-10."""
import os

from tensorlite.keras.datasets._cache import fetch
from tensorlite.keras.datasets.cifar10 import load_batch

DIRNAME = "cifar-100-python"
ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
FILE_HASH = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


def load_data(label_mode="fine"):
    """((x_train, y_train), (x_test, y_test)): uint8 [N,32,32,3] images, [N,1] labels of
    the 100 fine classes or, with label_mode="coarse", the 20 superclasses."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: '
                         f"label_mode={label_mode}.")
    root = fetch(DIRNAME, ORIGIN, FILE_HASH, untar=True)
    key = label_mode + "_labels"
    x_train, y_train = load_batch(os.path.join(root, "train"), label_key=key)
    x_test, y_test = load_batch(os.path.join(root, "test"), label_key=key)
    return ((x_train.transpose(0, 2, 3, 1), y_train.reshape(-1, 1)),
            (x_test.transpose(0, 2, 3, 1), y_test.reshape(-1, 1)))
