"""`tf.train.Example` and its parts. The messages live in `tensorlite.protos.example`, a low
layer every format can import; this module keeps the old `tensorlite.train.example` path."""
from tensorlite.protos.example import *  # noqa: F401,F403
from tensorlite.protos.example import (  # noqa: F401
    DATA_TYPES, POOL, __all__, add_files, message_class)
