"""`tf.keras.layers.experimental`: where TF 2.2-2.5 kept the preprocessing layers (the TF
Dev Summit 2020 talk "Learning to read with TensorFlow and Keras" uses
`tf.keras.layers.experimental.preprocessing.TextVectorization`)."""
from tensorlite.keras.layers.experimental import preprocessing  # noqa: F401
