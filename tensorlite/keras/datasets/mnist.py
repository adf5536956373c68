"""`tf.keras.datasets.mnist.load_data()`: Keras's `mnist.npz`, downloaded once into the
Keras cache and checked against its published SHA-256."""
from tensorlite.keras.datasets._cache import ORIGIN_FOLDER, fetch
from tensorlite.keras.datasets.npz import load_npz

ORIGIN = ORIGIN_FOLDER + "mnist.npz"
FILE_HASH = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"


def load_data(path="mnist.npz"):
    """((x_train, y_train), (x_test, y_test)): uint8 [N,28,28] images, uint8 labels."""
    f = load_npz(fetch(path, ORIGIN, FILE_HASH))
    return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
