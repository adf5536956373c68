"""Where `tf.keras.datasets` download to and load from: $KERAS_HOME/datasets (default
~/.keras/datasets), through `tf.keras.utils.get_file`: fetched once from the origin Keras
uses, checked against its published SHA-256 (or MD5) before it is kept, and loaded from
the cache offline afterwards."""
from tensorlite.keras.utils.data_utils import get_file

# Keras's folder of the datasets it repackaged (MNIST, IMDB, Reuters, Boston housing, ...)
ORIGIN_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def fetch(fname, origin, file_hash, **kwargs):
    """The cached, verified local path of `fname` (downloaded from `origin` if needed)."""
    return get_file(fname, origin=origin, file_hash=file_hash, **kwargs)
