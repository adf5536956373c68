"""`schema_utils.schema_from_feature_spec` / `schema_as_feature_spec`: between a feature spec
({name: tf.io.FixedLenFeature or tf.io.VarLenFeature}) and a TensorFlow Metadata Schema (as
tf.Transform)."""
import tensorlite as tf
from tensorlite.data_validation import metadata_protos as pb

_TYPES = {tf.string: "BYTES", tf.int64: "INT", tf.float32: "FLOAT", tf.float64: "FLOAT"}
_DTYPES = {"BYTES": tf.string, "INT": tf.int64, "FLOAT": tf.float32}


def schema_from_feature_spec(feature_spec, domains=None):
    """A Schema of FixedLenFeatures (required, with their shape, as tf.Transform writes) and
    VarLenFeatures (no shape: any number of values)."""
    schema = pb.Schema()
    enum = pb.Feature.DESCRIPTOR.fields_by_name["type"].enum_type
    for name in sorted(feature_spec):
        spec = feature_spec[name]
        kind = type(spec).__name__
        if kind not in ("FixedLenFeature", "VarLenFeature"):
            raise NotImplementedError(f"schema_from_feature_spec: {name!r} is a {kind}; only "
                                      "FixedLenFeature and VarLenFeature are supported by "
                                      "tensorlite")
        feature = schema.feature.add(name=name,
                                     type=enum.values_by_name[_TYPES[spec.dtype]].number)
        if kind == "VarLenFeature":
            continue
        feature.presence.min_fraction = 1.0
        feature.shape.SetInParent()
        for size in spec.shape:
            feature.shape.dim.add(size=size)
    return schema


def schema_as_feature_spec(schema):
    """{name: tf.io.FixedLenFeature(shape, dtype)} of a Schema's features with a shape,
    tf.io.VarLenFeature(dtype) of those without."""
    enum = pb.Feature.DESCRIPTOR.fields_by_name["type"].enum_type
    out = {}
    for feature in schema.feature:
        dtype = _DTYPES[enum.values_by_number[feature.type].name]
        out[feature.name] = tf.io.FixedLenFeature([d.size for d in feature.shape.dim], dtype) \
            if feature.HasField("shape") else tf.io.VarLenFeature(dtype)
    return out
