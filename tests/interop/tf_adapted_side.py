"""TensorFlow's side of test_adapted_sequential_interop.py, run by conftest.run_tf with
Keras 3: `python tf_adapted_side.py read DIR` loads every DIR/*.keras tensorlite wrote and
predicts on DIR/<name>_x.npy; prints a JSON object {name: max |Keras 3 - tensorlite|}."""
import json
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf


def read(directory):
    out = {}
    for path in sorted(Path(directory).glob("*.keras")):
        model = tf.keras.models.load_model(str(path))
        x = np.load(path.with_name(path.stem + "_x.npy"), allow_pickle=True)
        x = tf.constant(x.astype(str)) if x.dtype == object else x
        got = model.predict(x, verbose=0)
        expected = np.load(path.with_name(path.stem + "_y.npy"))
        out[path.stem] = float(np.abs(got - expected).max())
    return out


if __name__ == "__main__":
    print(json.dumps(read(sys.argv[2])))
