"""`tf.version`: TensorFlow's version strings, in TensorFlow's form.

`VERSION` names the TensorFlow API level tensorlite follows (programs compare it, e.g.
`tf.__version__ >= "2."`); `TENSORLITE_VERSION` is this package's own version.

Example:
    >>> tf.version.VERSION.split(".")[0]
    '2'
"""
VERSION = "2.16.1"
TENSORLITE_VERSION = "0.1.0"
GIT_VERSION = f"tensorlite-{TENSORLITE_VERSION}"
COMPILER_VERSION = "numpy"
GRAPH_DEF_VERSION = 1766
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
