"""`tf.keras.preprocessing`: TF 2's older text, sequence and image utilities
(text.Tokenizer, sequence.pad_sequences, image.load_img), kept for programs that still use
them."""
from tensorlite.keras.preprocessing import image, sequence, text  # noqa: F401
