"""Real TensorFlow's side of test_layer_config_interop.py, run in the TF venv (never imports
tensorlite): `read DIR` loads the `dense.keras`/`dense.h5` models tensorlite saved and
reports the weight arguments and predictions its Keras sees; `write DIR` saves the same
model from real Keras for tensorlite to load."""
import json
import sys
from pathlib import Path

import numpy as np


def _facts(model, x):
    dense = model.layers[-1]
    return {"kernel_constraint": type(dense.kernel_constraint).__name__,
            "max_value": float(dense.kernel_constraint.get_config()["max_value"]),
            "bias_constraint": type(dense.bias_constraint).__name__,
            "activity_regularizer": type(dense.activity_regularizer).__name__,
            "l2": float(dense.activity_regularizer.get_config()["l2"]),
            "pred": model.predict(x, verbose=0).tolist()}


def main(command, directory):
    import tensorflow as tf  # noqa: PLC0415 - after the environment is set
    keras = tf.keras
    d = Path(directory)
    x = np.load(d / "x.npy")
    if command == "read":
        print(json.dumps({fmt: _facts(keras.models.load_model(str(d / f"dense.{fmt}"),
                                                              compile=False), x)
                          for fmt in ("keras", "h5")}))
        return
    inputs = keras.Input((3,))
    dense = keras.layers.Dense(2, kernel_constraint=keras.constraints.MaxNorm(1.5),
                               bias_constraint=keras.constraints.NonNeg(),
                               activity_regularizer=keras.regularizers.L2(0.25))
    model = keras.Model(inputs, dense(inputs))
    for fmt in ("keras", "h5"):
        model.save(str(d / f"dense.{fmt}"))
    print(json.dumps(_facts(model, x)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
