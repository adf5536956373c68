"""`tf.keras.preprocessing`: TF 2's older text and sequence utilities (text.Tokenizer,
sequence.pad_sequences), kept for programs that still use them."""
from tensorlite.keras.preprocessing import sequence, text  # noqa: F401
