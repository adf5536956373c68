"""`tf.strings` hash buckets, bit-equal to TensorFlow's (Fingerprint64, SipHash-2-4, the
legacy Hash64).

Example:
    >>> tf.strings.to_hash_bucket_fast(["Hello"], 3).numpy()
    array([0])
"""
from tensorlite.ops import string_ops as so
from tensorlite.strings.common import _strings, elementwise


# -- hashing -------------------------------------------------------------------------------------------
@elementwise
def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """`tf.strings.to_hash_bucket_fast`: Fingerprint64(s) % num_buckets, as TensorFlow.

    >>> tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3).numpy()
    array([0, 2, 2])"""
    return so.TO_HASH_BUCKET_FAST(_strings(input, "StringToHashBucketFast"),
                                  num_buckets=int(num_buckets))


@elementwise
def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """`tf.strings.to_hash_bucket_strong`: SipHash-2-4 keyed by `key` (two ints).

    >>> tf.strings.to_hash_bucket_strong(["Hello", "TF"], 3, [1, 2]).numpy()
    array([2, 0])"""
    key = [int(k) for k in key]
    if len(key) != 2:
        raise ValueError(f"to_hash_bucket_strong: key must be two integers, got {key}")
    return so.TO_HASH_BUCKET_STRONG(_strings(input, "StringToHashBucketStrong"),
                                    num_buckets=int(num_buckets), key=tuple(key))


@elementwise
def to_hash_bucket(input, num_buckets, name=None):  # noqa: A002
    """`tf.strings.to_hash_bucket`: TensorFlow's legacy Hash64 % num_buckets.

    >>> tf.strings.to_hash_bucket(["Hello", "TensorFlow", "2.x"], 3).numpy()
    array([2, 0, 1])"""
    return so.TO_HASH_BUCKET(_strings(input, "StringToHashBucket"),
                             num_buckets=int(num_buckets))
