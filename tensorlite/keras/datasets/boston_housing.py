"""`tf.keras.datasets.boston_housing.load_data()`: 506 houses of 13 features and their
median price (Keras's `boston_housing.npz`), downloaded once into the Keras cache and
checked against Keras's published SHA-256. (Keras warns that the data set has an ethical
problem, its feature "B"; use it to illustrate that, if at all.)"""
import numpy as np

from tensorlite.keras.datasets._cache import ORIGIN_FOLDER, fetch
from tensorlite.keras.datasets.npz import load_npz

ORIGIN = ORIGIN_FOLDER + "boston_housing.npz"
FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """((x_train, y_train), (x_test, y_test)) shuffled with `seed`."""
    if not 0 <= test_split < 1:
        raise ValueError(f"test_split must be in [0, 1), got {test_split}")
    f = load_npz(fetch(path, ORIGIN, FILE_HASH))
    order = np.arange(len(f["x"]))
    np.random.RandomState(seed).shuffle(order)
    x, y = f["x"][order], f["y"][order]
    cut = int(len(x) * (1 - test_split))
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])
