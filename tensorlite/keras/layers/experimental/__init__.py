"""`tf.keras.layers.experimental`: where TF 2.2-2.5 kept the preprocessing layers (seed 001
uses `tf.keras.layers.experimental.preprocessing.TextVectorization`)."""
from tensorlite.keras.layers.experimental import preprocessing  # noqa: F401
