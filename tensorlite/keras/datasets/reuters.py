"""`tf.keras.datasets.reuters`: 11,228 newswires over 46 topics as word-id sequences
(Keras's `reuters.npz`), `get_word_index()` and `get_label_names()`; downloaded once into
the Keras cache and checked against Keras's published hashes."""
import numpy as np

from tensorlite.keras.datasets import sequences
from tensorlite.keras.datasets._cache import ORIGIN_FOLDER, fetch
from tensorlite.keras.datasets.imdb import load_word_index
from tensorlite.keras.datasets.npz import load_npz

ORIGIN = ORIGIN_FOLDER + "reuters.npz"
FILE_HASH = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_ORIGIN = ORIGIN_FOLDER + "reuters_word_index.json"
WORD_INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"
_LABELS = ("cocoa grain veg-oil earn acq wheat copper housing money-supply coffee sugar "
           "trade reserves ship cotton carcass crude nat-gas cpi money-fx interest gnp "
           "meal-feed alum oilseed gold tin strategic-metal livestock retail ipi iron-steel "
           "rubber heat jobs lei bop zinc orange pet-chem dlr gas silver wpi hog lead").split()


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2,
              seed=113, start_char=1, oov_char=2, index_from=3):
    """((x_train, y_train), (x_test, y_test)): word-id lists and topic labels, shuffled
    with `seed`, the last `test_split` fraction as the test set."""
    f = load_npz(fetch(path, ORIGIN, FILE_HASH))
    order = np.arange(len(f["x"]))
    np.random.RandomState(seed).shuffle(order)
    xs, labels = sequences.drop_long(sequences.mark(f["x"][order], start_char, index_from),
                                     f["y"][order], maxlen)
    xs = sequences.limit(xs, num_words, skip_top, oov_char)
    cut = int(len(xs) * (1 - test_split))
    return ((np.array(xs[:cut], dtype=object), np.array(labels[:cut])),
            (np.array(xs[cut:], dtype=object), np.array(labels[cut:])))


def get_word_index(path="reuters_word_index.json"):
    """{word: index} of the Reuters vocabulary (indices before `index_from` is added)."""
    return load_word_index(fetch(path, WORD_INDEX_ORIGIN, WORD_INDEX_HASH))


def get_label_names():
    """The 46 topic names, in label order."""
    return tuple(_LABELS)
