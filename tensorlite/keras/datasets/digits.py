"""`tf.keras.datasets.digits.load_data()` (tensorlite's own): the 1,797 8x8 handwritten
digits that scikit-learn ships inside its package — real data that loads offline.

Images are uint8 [N, 8, 8] scaled to 0..255 (the originals are 0..16); the split is a
fixed, stratified-by-shuffle 75/25.
"""
import numpy as np


def load_data(test_split=0.25, seed=113):
    try:
        from sklearn.datasets import load_digits  # noqa: PLC0415
    except ImportError:
        raise ImportError("tf.keras.datasets.digits needs scikit-learn (it ships the data): "
                          "pip install '.[examples]' in a clone of tensorlite") from None
    d = load_digits()
    x = np.round(d.images * (255.0 / 16.0)).astype(np.uint8)
    y = d.target.astype(np.uint8)
    order = np.random.default_rng(seed).permutation(len(x))
    cut = int(len(x) * (1 - test_split))
    tr, te = order[:cut], order[cut:]
    return (x[tr], y[tr]), (x[te], y[te])
