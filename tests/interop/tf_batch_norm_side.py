"""TensorFlow's side of test_batch_norm_train_interop.py: loads the SavedModel in DIRECTORY/model,
runs its training function on DIRECTORY/x.npy twice and prints the outputs and the moving
statistics after each call, as JSON."""
import json
import sys

import numpy as np
import tensorflow as tf

directory = sys.argv[2]
model = tf.saved_model.load(f"{directory}/model")
x = np.load(f"{directory}/x.npy")
out = {}
for k in range(2):
    out[f"y{k}"] = model.train(x).numpy().tolist()
    mean, var = model.moving()
    out[f"mean{k}"], out[f"var{k}"] = mean.numpy().tolist(), var.numpy().tolist()
print(json.dumps(out))
