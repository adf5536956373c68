"""`tf.strings`: string ops on tf.string tensors (and on ragged tensors of strings).

Every function runs registry ops (tensorlite/ops/string_ops.py, unicode_ops.py), so it works
eagerly, in `Dataset.map` and inside `tf.function`. Results TensorFlow gives as ragged
(`split`, `ngrams`, `unicode_decode`, ...) are `tf.RaggedTensor`s; an elementwise function
given a RaggedTensor applies to its flat values.

Example:
    >>> tf.strings.split(["hello world", "a b c"]).to_list()
    [[b'hello', b'world'], [b'a', b'b', b'c']]
    >>> tf.strings.regex_replace("a.b,c", r"[.,]", " ").numpy()
    b'a b c'
"""
from tensorlite.strings.hashing import (to_hash_bucket, to_hash_bucket_fast,  # noqa: F401
                                        to_hash_bucket_strong)
from tensorlite.strings.text_ops import (as_string, format, join, length,  # noqa: F401,A004
                                         lower, ngrams, reduce_join, regex_full_match,
                                         regex_replace, split, strip, substr, to_number, upper)
from tensorlite.strings.unicode import (bytes_split, unicode_decode,  # noqa: F401
                                        unicode_decode_with_offsets, unicode_encode,
                                        unicode_split, unicode_transcode)

__all__ = ["as_string", "bytes_split", "format", "join", "length", "lower", "ngrams",
           "reduce_join", "regex_full_match", "regex_replace", "split", "strip", "substr",
           "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong", "to_number",
           "unicode_decode", "unicode_decode_with_offsets", "unicode_encode", "unicode_split",
           "unicode_transcode", "upper"]

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "strings.", modules=("tensorlite.strings.",))  # on Keras symbolic tensors: layers
