"""`tf.experimental.Optional` as tf.data uses it (`get_next_as_optional`)."""
from tensorlite.experimental.optional import Optional, OptionalSpec  # noqa: F401


def get_next_as_optional(iterator):
    """`tf.data.experimental.get_next_as_optional(iterator)`: the next element as an
    Optional, empty at the end of the dataset."""
    return iterator.get_next_as_optional()
