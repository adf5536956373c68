"""TensorFlow's side of test_batch_sized_constants_interop.py: loads tensorlite's SavedModel
of an LSTM (whose zero state follows the batch size) and calls its signature at several
batch sizes. Run as `tf_batch_sized_side.py call DIRECTORY`."""
import json
import os
import sys

import numpy as np
import tensorflow as tf

if __name__ == "__main__":
    directory = sys.argv[2]
    x = np.load(os.path.join(directory, "x.npz"))["x"]
    serve = tf.saved_model.load(os.path.join(directory, "lstm")).signatures["serving_default"]
    out = {f"batch_{b}": next(iter(serve(tf.constant(x[:b])).values())).numpy()
           for b in (1, 3, 4)}
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    print(json.dumps({"shapes": {k: list(v.shape) for k, v in out.items()}}))
