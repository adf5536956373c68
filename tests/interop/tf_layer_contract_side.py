"""Real Keras 3's side of test_layer_contract_interop.py, run in the TF venv (never imports
tensorlite): `read DIR` loads every `<name>.keras` model there and reports, per name, its
largest difference from `<name>_y.npy` on `<name>_x.npz`, or the error loading it raised."""
import json
import sys
from pathlib import Path

import numpy as np


def tf_constant(x):
    import tensorflow as tf  # noqa: PLC0415
    return tf.constant(x.astype(str))


def _one(keras, directory, name):
    model = keras.models.load_model(str(directory / f"{name}.keras"))
    xs = np.load(directory / f"{name}_x.npz", allow_pickle=True)  # string inputs
    args = [xs[k] for k in sorted(xs.files)]
    inputs = args[0] if len(args) == 1 else args
    if any(a.dtype == object for a in args):  # strings: predict takes no object arrays
        got = model(tf_constant(inputs)).numpy()
    else:
        got = model.predict(inputs, verbose=0)
    expected = np.load(directory / f"{name}_y.npy")
    return float(np.max(np.abs(np.asarray(got, np.float64) - expected))) if expected.size \
        else 0.0


def main(command, directory):
    import tensorflow as tf  # noqa: PLC0415 - after the environment is set
    directory = Path(directory)
    report = {}
    for path in sorted(directory.glob("*.keras")):
        try:
            report[path.stem] = {"diff": _one(tf.keras, directory, path.stem)}
        except Exception as e:  # noqa: BLE001 - each layer's failure is reported, not fatal
            report[path.stem] = {"error": f"{type(e).__name__}: {str(e)[-400:]}"}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
