"""FlatBuffers of TensorFlow Lite's schema (tensorlite/lite/schema.py) as plain Python data.

`encode(obj)` writes a Model given as nested dicts (a table is a dict of field values; a
union field is a `(member table name, dict)` pair; enums are ints or their names; numeric
vectors may be NumPy arrays) with the `flatbuffers` Builder; `decode(data)` reads a file
back into the same form, numeric vectors as read-only NumPy views of the file (weights are
never copied). Malformed files raise DataLossError (a ValueError too, as in TensorFlow
Lite).

Example:
    >>> data = encode({"version": 3, "description": "m", "buffers": [{}]})
    >>> data[4:8], decode(data)["description"]
    (b'TFL3', 'm')
"""
import numpy as np

try:
    import flatbuffers
    from flatbuffers import encode as fb_encode
    from flatbuffers import number_types as N
    from flatbuffers.table import Table
except ImportError as e:  # an optional extra
    raise ImportError("tf.lite needs the flatbuffers package: pip install '.[lite]'"
                      " in a clone of tensorlite") from e

from tensorlite.lite import schema
from tensorlite.lite.model_errors import data_loss

# schema scalar type -> (Builder.Prepend<X>Slot suffix, NumPy dtype, flatbuffers flags)
_SCALARS = {
    "bool": ("Bool", np.bool_, N.BoolFlags), "byte": ("Int8", np.int8, N.Int8Flags),
    "ubyte": ("Uint8", np.uint8, N.Uint8Flags), "short": ("Int16", np.int16, N.Int16Flags),
    "ushort": ("Uint16", np.uint16, N.Uint16Flags), "int": ("Int32", np.int32, N.Int32Flags),
    "uint": ("Uint32", np.uint32, N.Uint32Flags), "long": ("Int64", np.int64, N.Int64Flags),
    "ulong": ("Uint64", np.uint64, N.Uint64Flags),
    "float": ("Float32", np.float32, N.Float32Flags),
    "double": ("Float64", np.float64, N.Float64Flags)}
for _alias, _base in (("int8", "byte"), ("uint8", "ubyte"), ("int16", "short"),
                      ("uint16", "ushort"), ("int32", "int"), ("uint32", "uint"),
                      ("int64", "long"), ("uint64", "ulong"), ("float32", "float"),
                      ("float64", "double")):
    _SCALARS[_alias] = _SCALARS[_base]


def _scalar_type(ftype):
    """The scalar type behind a scalar or enum type name, or None."""
    if ftype in _SCALARS:
        return ftype
    base = schema.ENUM_TYPES.get(ftype)
    return base if base is not None else None


def _default(ftype, text):
    if text is None:
        return False if ftype == "bool" else 0
    if text in ("true", "false"):
        return text == "true"
    if ftype in schema.ENUMS and text in schema.ENUMS[ftype]:
        return schema.ENUMS[ftype][text]
    return float(text) if ("." in text or "e" in text) else int(text, 0)


def _layout(table):
    """[(slot, name, type, default, align, is_union)] of a table, cached."""
    cached = _LAYOUTS.get(table)
    if cached is None:
        cached, slot = [], 0
        for name, ftype, default, _deprecated, align in schema.TABLES[table]:
            is_union = ftype in schema.UNIONS
            if is_union:
                slot += 1  # `<name>_type` takes the slot before the value
            cached.append((slot, name, ftype, _default(ftype, default), align, is_union))
            slot += 1
        _LAYOUTS[table] = cached
    return cached


_LAYOUTS = {}


def enum_value(enum, value):
    """An enum member's int from its name or int."""
    return schema.ENUMS[enum][value] if isinstance(value, str) else int(value)


# -- writing --------------------------------------------------------------------------------
def _vector(builder, elem, values, align):
    scalar = _scalar_type(elem)
    if scalar is not None:
        suffix, dtype, _ = _SCALARS[scalar]
        if elem in schema.ENUMS:
            values = [enum_value(elem, v) for v in values]
        array = np.ascontiguousarray(values, dtype=dtype).reshape(-1)
        builder.StartVector(array.itemsize, array.size, max(align or 1, array.itemsize))
        builder.head -= array.nbytes
        builder.Bytes[builder.head:builder.head + array.nbytes] = array.astype(
            array.dtype.newbyteorder("<"), copy=False).tobytes()
        return builder.EndVector()
    if elem == "string":
        offsets = [builder.CreateString(v) for v in values]
    else:
        offsets = [_table(builder, elem, v) for v in values]
    builder.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return builder.EndVector()


def _table(builder, table, obj):
    layout = {f[1]: f for f in _layout(table)}
    unknown = set(obj) - set(layout)
    if unknown:
        raise ValueError(f"table {table} has no fields {sorted(unknown)}")
    offsets = {}
    for name, value in obj.items():
        _, _, ftype, _, align, is_union = layout[name]
        if value is None:
            continue
        if is_union:
            member, fields = value
            offsets[name] = (schema.UNIONS[ftype].index(member) + 1,
                             _table(builder, member, fields))
        elif ftype.startswith("["):
            offsets[name] = _vector(builder, ftype[1:-1], value, align)
        elif ftype == "string":
            offsets[name] = builder.CreateString(value)
        elif ftype in schema.TABLES:
            offsets[name] = _table(builder, ftype, value)
    builder.StartObject(max((f[0] for f in layout.values()), default=-1) + 1)
    for name, value in obj.items():
        if value is None:
            continue
        slot, _, ftype, default, _, is_union = layout[name]
        if is_union:
            code, off = offsets[name]
            builder.PrependUint8Slot(slot - 1, code, 0)
            builder.PrependUOffsetTRelativeSlot(slot, off, 0)
        elif name in offsets:
            builder.PrependUOffsetTRelativeSlot(slot, offsets[name], 0)
        else:
            suffix = _SCALARS[_scalar_type(ftype)][0]
            if ftype in schema.ENUMS:
                value = enum_value(ftype, value)
            getattr(builder, f"Prepend{suffix}Slot")(slot, value, default)
    return builder.EndObject()


def encode(model):
    """The bytes of a `.tflite` file (identifier TFL3) holding `model` (a Model dict)."""
    builder = flatbuffers.Builder(1 << 16)
    root = _table(builder, schema.ROOT_TYPE, model)
    builder.Finish(root, file_identifier=schema.FILE_IDENTIFIER.encode())
    return bytes(builder.Output())


# -- reading --------------------------------------------------------------------------------
class _Reader:
    """Decodes tables of one buffer. Tables may share their children, so a small file
    could decode into a product of its vectors' lengths: each decoded table or string costs
    one unit of a budget of one per 4 bytes of file (what unshared tables take at least)."""

    def __init__(self, buf):
        self.buf = buf
        self.budget = len(buf) // 4 + 64

    def _spend(self, n=1):
        self.budget -= n
        if self.budget < 0:
            raise _Corrupt("its tables are shared more times than the file's size allows "
                           "(a decompression bomb made of references)")

    def vector(self, tab, o, elem):
        buf = self.buf
        start, n = tab.Vector(o), tab.VectorLen(o)
        scalar = _scalar_type(elem)
        if scalar is not None:
            dtype = np.dtype(_SCALARS[scalar][1]).newbyteorder("<")
            return np.frombuffer(buf, dtype=dtype, count=n, offset=start)
        if start + 4 * n > len(buf):
            raise _Corrupt(f"a vector of {n} {elem}s runs past the end of the file")
        self._spend(n)
        if elem == "string":
            return [Table(buf, 0).String(start + 4 * i).decode("utf-8") for i in range(n)]
        return [self.table(elem, tab.Indirect(start + 4 * i)) for i in range(n)]

    def _union(self, tab, slot, ftype, o):
        code = tab.Get(N.Uint8Flags, tab.Pos + tab.Offset(2 + 2 * slot)) \
            if tab.Offset(2 + 2 * slot) else 0
        members = schema.UNIONS[ftype]
        if o and 0 < code <= len(members):
            member = members[code - 1]
            return member, self.table(member, tab.Indirect(tab.Pos + o))
        return None

    def table(self, table, pos):
        self._spend()
        tab = Table(self.buf, pos)
        out = {}
        for slot, name, ftype, default, _, is_union in _layout(table):
            o = tab.Offset(4 + 2 * slot)
            if is_union:
                out[name] = self._union(tab, slot, ftype, o)
            elif ftype.startswith("["):
                out[name] = self.vector(tab, o, ftype[1:-1]) if o else None
            elif ftype == "string":
                out[name] = tab.String(tab.Pos + o).decode("utf-8") if o else None
            elif ftype in schema.TABLES:
                out[name] = self.table(ftype, tab.Indirect(tab.Pos + o)) if o else None
            else:
                flags = _SCALARS[_scalar_type(ftype)][2]
                out[name] = tab.Get(flags, tab.Pos + o) if o else default
        return out


class _Corrupt(Exception):
    """A structural fault found while decoding (reported as the file's DataLossError)."""


def decode(data, source="Model provided"):
    """A `.tflite` file's Model as nested dicts. A file that is not one (too short, another
    file identifier) or whose offsets point outside it raises DataLossError (also a
    ValueError, as TensorFlow Lite raises) naming `source`."""
    buf = data if isinstance(data, (bytes, bytearray, memoryview)) else bytes(data)
    if len(buf) < 8:
        raise data_loss(source, f"Model provided has {len(buf)} bytes: too short to be a "
                                f"TensorFlow Lite FlatBuffer")
    ident = bytes(buf[4:8])
    if ident != schema.FILE_IDENTIFIER.encode():
        raise data_loss(source, f"Model provided has file identifier {ident!r}, not "
                                f"{schema.FILE_IDENTIFIER!r}: it is not a TensorFlow Lite "
                                f"model")
    try:
        root = fb_encode.Get(N.UOffsetTFlags.packer_type, buf, 0)
        return _Reader(buf).table(schema.ROOT_TYPE, root)
    except Exception as e:  # noqa: BLE001 - any decoding failure means a malformed file
        raise data_loss(source, f"Model provided is not a valid TensorFlow Lite FlatBuffer: "
                                f"{type(e).__name__}: {e}") from None
