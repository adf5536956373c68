"""The three string hashes TensorFlow uses, bit for bit.

- `fingerprint64`: farmhash Fingerprint64 (`to_hash_bucket_fast`, `StaticVocabularyTable`'s
  OOV buckets, Keras `Hashing`), from the `pyfarmhash` binding (the `text` extra).
- `siphash24`: SipHash-2-4 keyed by two uint64 words (`to_hash_bucket_strong`).
- `murmur64`: TensorFlow's legacy `Hash64` (MurmurHash64A, seed 0xDECAFCAFFE), used by
  `to_hash_bucket`.

Example:
    >>> siphash24(b"", 0x0706050403020100, 0x0F0E0D0C0B0A0908) == 0x726FDB47DD0E0E31
    True
"""
import struct

_M64 = (1 << 64) - 1


def fingerprint64(data):
    """farmhash::Fingerprint64 of bytes, as TensorFlow's Fingerprint64."""
    try:
        import farmhash  # noqa: PLC0415 - optional (the `text` extra)
    except ImportError:
        raise NotImplementedError(
            "Fingerprint64 (to_hash_bucket_fast, StaticVocabularyTable OOV buckets, Hashing) "
            "needs the pyfarmhash package: pip install '.[text]'"
            " in a clone of tensorlite") from None
    return farmhash.fingerprint64(data)


def fingerprint64_fn():
    """The fingerprint function itself (no import per string in hot loops)."""
    fingerprint64(b"")  # raises the clear error when the binding is missing
    import farmhash  # noqa: PLC0415
    return farmhash.fingerprint64


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _M64


def _sipround(v0, v1, v2, v3):
    v0 = (v0 + v1) & _M64
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _M64
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _M64
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _M64
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(data, k0, k1):
    """SipHash-2-4 of bytes under the 128-bit key (k0, k1), as a uint64."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    n = len(data)
    tail = n - n % 8
    for (m,) in struct.iter_unpack("<Q", data[:tail]):
        v3 ^= m
        v0, v1, v2, v3 = _sipround(*_sipround(v0, v1, v2, v3))
        v0 ^= m
    last = int.from_bytes(data[tail:], "little") | ((n & 0xFF) << 56)
    v3 ^= last
    v0, v1, v2, v3 = _sipround(*_sipround(v0, v1, v2, v3))
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


_MUL = 0xC6A4A7935BD1E995


def murmur64(data, seed=0xDECAFCAFFE):
    """TensorFlow's legacy Hash64 (MurmurHash64A) of bytes."""
    n = len(data)
    h = (seed ^ (n * _MUL)) & _M64
    tail = n - n % 8
    for (k,) in struct.iter_unpack("<Q", data[:tail]):
        k = (k * _MUL) & _M64
        k ^= k >> 47
        k = (k * _MUL) & _M64
        h = ((h ^ k) * _MUL) & _M64
    rest = data[tail:]
    if rest:
        h = ((h ^ int.from_bytes(rest, "little")) * _MUL) & _M64
    h ^= h >> 47
    h = (h * _MUL) & _M64
    return h ^ (h >> 47)
