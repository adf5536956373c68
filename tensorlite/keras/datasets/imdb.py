"""`tf.keras.datasets.imdb`: 25,000 training and 25,000 test movie reviews as word-id
sequences (Keras's `imdb.npz`), and `get_word_index()`; downloaded once into the Keras
cache and checked against Keras's published hashes. The sequences are object arrays, read
with the arrays-only unpickler of `npz.py`."""
import json

import numpy as np

from tensorlite.framework import errors
from tensorlite.keras.datasets import sequences
from tensorlite.keras.datasets._cache import ORIGIN_FOLDER, fetch
from tensorlite.keras.datasets.npz import load_npz

ORIGIN = ORIGIN_FOLDER + "imdb.npz"
FILE_HASH = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_ORIGIN = ORIGIN_FOLDER + "imdb_word_index.json"
WORD_INDEX_HASH = "bfafd718b763782e994055a2d397834f"


def _shuffled(rng, x, y):
    order = np.arange(len(x))
    rng.shuffle(order)
    return x[order], y[order]


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3, **kwargs):
    """((x_train, y_train), (x_test, y_test)): lists of word ids (object arrays) and 0/1
    labels, shuffled with `seed` and transformed as Keras does (see sequences.py)."""
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
    f = load_npz(fetch(path, ORIGIN, FILE_HASH))
    rng = np.random.RandomState(seed)
    x_train, y_train = _shuffled(rng, f["x_train"], f["y_train"])
    x_test, y_test = _shuffled(rng, f["x_test"], f["y_test"])
    x_train, y_train = sequences.drop_long(sequences.mark(x_train, start_char, index_from),
                                           y_train, maxlen)
    x_test, y_test = sequences.drop_long(sequences.mark(x_test, start_char, index_from),
                                         y_test, maxlen)
    if not x_train or not x_test:
        raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                         f"sequence was kept. Increase maxlen.")
    xs = sequences.limit(x_train + x_test, num_words, skip_top, oov_char)
    n = len(x_train)
    return ((np.array(xs[:n], dtype=object), np.array(y_train)),
            (np.array(xs[n:], dtype=object), np.array(y_test)))


def get_word_index(path="imdb_word_index.json"):
    """{word: index} of the IMDB vocabulary (indices before `index_from` is added)."""
    return load_word_index(fetch(path, WORD_INDEX_ORIGIN, WORD_INDEX_HASH))


def load_word_index(path):
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
        if not isinstance(index, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.DataLossError(None, None, f"{path} is not a word index: {e}") from None
    return index
