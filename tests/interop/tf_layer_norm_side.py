"""TensorFlow's side of test_layer_norm_interop.py: loads tensorlite's SavedModel of a
module whose functions run the fused training ops (LayerNorm, SoftmaxGrad), written as TF's
nodes of their compositions, and calls one. Run as `tf_layer_norm_side.py METHOD DIRECTORY`
(METHOD: train or grad)."""
import json
import os
import sys

import numpy as np
import tensorflow as tf

if __name__ == "__main__":
    directory = sys.argv[2]
    x = np.load(os.path.join(directory, "x.npz"))["x"]
    module = tf.saved_model.load(os.path.join(directory, "module"))
    out = getattr(module, sys.argv[1])(tf.constant(x)).numpy()
    np.savez(os.path.join(directory, "tf_out.npz"), y=out)
    print(json.dumps({"shape": list(out.shape)}))
