"""CRC32C (Castagnoli), the checksum TensorFlow's file formats store: TFRecord frames, event
files, checkpoint bundles and their tables. It lives in `framework` because formats of every
layer use it (checkpoints and summaries must not import `data` for it).

The `crc32c` package (or `google-crc32c`) computes it when installed, else the table-driven
Python version here. TensorFlow stores it masked, mask(crc) = ((crc >> 15) | (crc << 17)) +
0xa282ead8 (mod 2**32), so that a CRC of bytes that hold CRCs stays well distributed.

Example:
    >>> from tensorlite.framework.checksums import crc32c, masked_crc32c
    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
"""
_MASK_DELTA = 0xA282EAD8


def _crc_table():
    poly = 0x82F63B78  # Castagnoli polynomial, bit-reflected
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c_python(data, crc=0):
    """CRC32C (Castagnoli) of `data`, table-driven; `crc` continues an earlier value."""
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _library_crc32c():
    try:
        import crc32c  # noqa: PLC0415
        if hasattr(crc32c, "crc32c"):
            return crc32c.crc32c
    except ImportError:
        pass
    try:
        import google_crc32c  # noqa: PLC0415
        return google_crc32c.value
    except ImportError:
        return None


crc32c_library = _library_crc32c()
crc32c = crc32c_library or crc32c_python


def mask(crc):
    """TensorFlow's masking of a stored CRC (see the module docstring)."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked):
    """The CRC that `mask` turned into `masked`."""
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_crc32c(data):
    """The masked CRC32C that TFRecord frames store (masking keeps CRCs of CRCs apart)."""
    return mask(crc32c(data))


__all__ = ["crc32c", "crc32c_python", "crc32c_library", "mask", "unmask", "masked_crc32c"]
