"""TensorFlow's side of test_layer_norm_interop.py: loads tensorlite's SavedModel of a
module whose function runs LayerNormalization in training mode (the fused LayerNorm op,
written as TF's nodes of the composition) and calls it. Run as
`tf_layer_norm_side.py call DIRECTORY`."""
import json
import os
import sys

import numpy as np
import tensorflow as tf

if __name__ == "__main__":
    directory = sys.argv[2]
    x = np.load(os.path.join(directory, "x.npz"))["x"]
    module = tf.saved_model.load(os.path.join(directory, "module"))
    out = module.train(tf.constant(x)).numpy()
    np.savez(os.path.join(directory, "tf_out.npz"), y=out)
    print(json.dumps({"shape": list(out.shape)}))
