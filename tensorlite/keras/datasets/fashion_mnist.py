"""`tf.keras.datasets.fashion_mnist.load_data()`: the four gzip'd IDX files, downloaded
once into the Keras cache's `fashion-mnist/` and checked against their SHA-256."""
import os

from tensorlite.keras.datasets._cache import ORIGIN_FOLDER, fetch
from tensorlite.keras.datasets.idx import read_idx

FILES = ["train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
         "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"]
FILE_HASHES = {
    "train-labels-idx1-ubyte.gz": "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
    "train-images-idx3-ubyte.gz": "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
    "t10k-labels-idx1-ubyte.gz": "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
    "t10k-images-idx3-ubyte.gz": "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
}


def load_data():
    """((x_train, y_train), (x_test, y_test)): uint8 [N,28,28] images, uint8 labels."""
    paths = [fetch(f, ORIGIN_FOLDER + f, FILE_HASHES[f],
                   cache_subdir=os.path.join("datasets", "fashion-mnist")) for f in FILES]
    y_train, x_train, y_test, x_test = (read_idx(p) for p in paths)
    return (x_train, y_train), (x_test, y_test)
