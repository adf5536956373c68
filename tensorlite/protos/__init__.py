"""Protocol-buffer messages of TensorFlow's formats, built from descriptors written here (no
protoc, no `_pb2` files): `example` holds the private descriptor pool, the helpers that
declare messages into it, `tf.train.Example` and `TensorProto`. It sits just above
`framework` so that every format (checkpoints, summaries, SavedModel, serving, parsing ops)
can share one pool without importing a public namespace such as `tf.train`.
"""
