"""Inputs both sides of the interop tests use (imported by tf_side.py under TensorFlow and
by the tests under tensorlite, so it imports neither)."""
import numpy as np

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
Y = np.stack([X.sum(axis=1), X[:, 0] - X[:, 2]], axis=1).astype(np.float32)
