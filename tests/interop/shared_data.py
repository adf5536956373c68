"""Inputs and models both sides of the interop tests use (imported by tf_side.py under
TensorFlow and by the tests under tensorlite, so it imports neither: the models are built
from whichever `keras` namespace the caller passes, tf.keras or tensorlite's)."""
import numpy as np

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
Y = np.stack([X.sum(axis=1), X[:, 0] - X[:, 2]], axis=1).astype(np.float32)


def images():
    return np.sin(np.arange(2 * 64, dtype=np.float32)).reshape(2, 8, 8, 1)


def keras_models(keras):
    """The Keras file fixtures' architectures: an MLP and a two-headed CNN."""
    mlp = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                            keras.layers.Dense(2)], name="mlp")
    x = keras.Input((8, 8, 1), name="image")
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(3, 3, strides=1, padding="valid")(h)
    h = keras.layers.Dropout(0.25)(keras.layers.Flatten()(h))
    a = keras.layers.Dense(3, activation="tanh")(h)
    b = keras.layers.Dense(2)(h)
    cnn = keras.Model(x, keras.layers.Concatenate()([a, b]), name="cnn")
    return mlp, cnn


def ops_model(tf):
    """A functional model that mixes layers with TF functions and operators called on
    symbolic tensors (tf.keras 2 records them as TFOpLambda / SlicingOpLambda layers), and
    a symbolic loss and metric (AddLoss / AddMetric), built from the caller's `tf`."""
    keras = tf.keras
    x = keras.Input((3,), name="values")
    h = keras.layers.Dense(4, name="hidden")(x)
    a = tf.nn.relu(h)
    c = tf.concat([a, h[:, :2] * 2.0], axis=-1)
    d = tf.reduce_mean(c, axis=1, keepdims=True) - c
    out = keras.layers.Dense(2, name="out")(1.0 - tf.math.square(d))
    model = keras.Model(x, out, name="ops")
    model.add_loss(tf.reduce_mean(a) * 0.01)
    model.add_metric(tf.math.reduce_std(h), name="std_h", aggregation="mean")
    return model
