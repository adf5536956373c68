"""tf.train.Example messages (checked against hand-built protobuf wire bytes), tf.io parsing
(parse_single_example, parse_example), decode_raw, serialize_tensor/parse_tensor,
read_file/write_file, tf.io.gfile and tf.sparse."""
import struct

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.io  # noqa: F401 - attaches tf.io
import tensorlite.sparse  # noqa: F401 - attaches tf.sparse
import tensorlite.train  # noqa: F401 - attaches tf.train
from tensorlite.data.tfrecord import TFRecordDataset

pytest.importorskip("google.protobuf")


# -- a tiny protobuf wire encoder, independent of the protobuf library -----------------------
def varint(n):
    n &= (1 << 64) - 1  # negative int64 -> two's complement, 10 bytes
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def tag(field, wire_type):
    return varint(field << 3 | wire_type)


def length_delimited(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def float_list(values):  # FloatList.value = 1, packed floats
    return length_delimited(1, b"".join(struct.pack("<f", v) for v in values))


def int64_list(values):  # Int64List.value = 1, packed varints
    return length_delimited(1, b"".join(varint(v) for v in values))


def bytes_list(values):  # BytesList.value = 1, not packed
    return b"".join(length_delimited(1, v) for v in values)


def feature(kind, payload):  # Feature oneof: bytes_list = 1, float_list = 2, int64_list = 3
    return length_delimited({"bytes": 1, "float": 2, "int64": 3}[kind], payload)


def features(entries):  # Features.feature = 1: map entries {key = 1, value = 2}
    return b"".join(length_delimited(1, length_delimited(1, k.encode()) +
                                     length_delimited(2, v)) for k, v in entries)


def example(entries):  # Example.features = 1
    return length_delimited(1, features(entries))


def make_example(**values):
    """A tf.train.Example; bytes -> bytes_list, floats -> float_list, ints -> int64_list."""
    feats = {}
    for key, v in values.items():
        items = list(np.asarray(v).reshape(-1)) if isinstance(v, np.ndarray) else \
            (v if isinstance(v, list) else [v])
        if isinstance(items[0], bytes):
            feats[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=items))
        elif isinstance(items[0], (float, np.floating)):
            feats[key] = tf.train.Feature(float_list=tf.train.FloatList(value=items))
        else:
            feats[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=items))
    return tf.train.Example(features=tf.train.Features(feature=feats))


# -- messages and their wire format ------------------------------------------------------------
def test_tiny_example_matches_hand_built_wire_bytes():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}))
    expected = example([("x", feature("float", float_list([1.0])))])
    assert expected == bytes.fromhex("0a0f0a0d0a0178120812060a040000803f")
    assert ex.SerializeToString() == expected


def test_each_list_kind_matches_hand_built_wire_bytes():
    cases = [
        (tf.train.Feature(int64_list=tf.train.Int64List(value=[1, -2, 300])),
         feature("int64", int64_list([1, -2, 300]))),
        (tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ab", b""])),
         feature("bytes", bytes_list([b"ab", b""]))),
        (tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, -2.0])),
         feature("float", float_list([0.5, -2.0]))),
    ]
    for message, wire in cases:
        assert message.SerializeToString() == wire
        assert tf.train.Feature.FromString(wire) == message


def test_from_string_and_parse_from_string_read_hand_built_bytes():
    wire = example([("label", feature("int64", int64_list([7]))),
                    ("name", feature("bytes", bytes_list([b"cat"])))])
    ex = tf.train.Example.FromString(wire)
    assert list(ex.features.feature["label"].int64_list.value) == [7]
    assert list(ex.features.feature["name"].bytes_list.value) == [b"cat"]
    other = tf.train.Example()
    other.ParseFromString(wire)
    assert other == ex
    assert ex.features.feature["label"].WhichOneof("kind") == "int64_list"


def test_field_numbers_are_tensorflows():
    num = {f.name: f.number for f in tf.train.Feature.DESCRIPTOR.fields}
    assert num == {"bytes_list": 1, "float_list": 2, "int64_list": 3}
    assert tf.train.Example.DESCRIPTOR.full_name == "tensorflow.Example"
    assert tf.train.Example.DESCRIPTOR.fields_by_name["features"].number == 1
    seq = tf.train.SequenceExample.DESCRIPTOR.fields_by_name
    assert (seq["context"].number, seq["feature_lists"].number) == (1, 2)
    assert tf.train.FeatureList.DESCRIPTOR.fields_by_name["feature"].number == 1
    assert tf.train.FeatureLists.DESCRIPTOR.fields_by_name["feature_list"].number == 1


def test_sequence_example_wire_bytes():
    seq = tf.train.SequenceExample()
    seq.context.feature["id"].int64_list.value.append(5)
    seq.feature_lists.feature_list["w"].feature.add().bytes_list.value.append(b"hi")
    fl = length_delimited(1, feature("bytes", bytes_list([b"hi"])))  # FeatureList.feature
    lists = length_delimited(1, length_delimited(1, b"w") + length_delimited(2, fl))
    expected = (length_delimited(1, features([("id", feature("int64", int64_list([5])))]))
                + length_delimited(2, lists))
    assert seq.SerializeToString() == expected


def test_numpy_values_are_accepted():
    f = tf.train.FloatList(value=np.array([1.5, 2.5], dtype=np.float32))
    i = tf.train.Int64List(value=np.arange(3))
    assert list(f.value) == [1.5, 2.5] and list(i.value) == [0, 1, 2]


# -- parse_single_example -------------------------------------------------------------------
SPEC = {"x": tf.io.FixedLenFeature([2], tf.float32),
        "n": tf.io.FixedLenFeature([], tf.int64),
        "s": tf.io.FixedLenFeature([], tf.string),
        "m": tf.io.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
        "tags": tf.io.VarLenFeature(tf.string),
        "ids": tf.io.VarLenFeature(tf.int64)}


def test_parse_single_example_dense_sparse_and_defaults():
    record = make_example(x=[1.0, 2.0], n=7, s=b"hi", tags=[b"a", b"bc"], ids=[4, 5, 6])
    out = tf.io.parse_single_example(tf.constant(record.SerializeToString()), SPEC)
    assert out["x"].dtype == tf.float32 and out["x"].numpy().tolist() == [1.0, 2.0]
    assert out["n"].dtype == tf.int64 and out["n"].shape == () and int(out["n"]) == 7
    assert out["s"].dtype == tf.string and out["s"].numpy() == b"hi"
    assert out["m"].numpy().tolist() == [-1.0, -2.0]
    tags = out["tags"]
    assert isinstance(tags, tf.sparse.SparseTensor)
    assert tags.indices.dtype == tf.int64 and tags.indices.numpy().tolist() == [[0], [1]]
    assert tags.values.numpy().tolist() == [b"a", b"bc"]
    assert tags.dense_shape.dtype == tf.int64 and tags.dense_shape.numpy().tolist() == [2]
    assert tf.sparse.to_dense(out["ids"]).numpy().tolist() == [4, 5, 6]


def test_parse_accepts_python_bytes_and_missing_varlen_is_empty():
    record = make_example(x=[1.0, 2.0], n=1, s=b"")
    out = tf.io.parse_single_example(record.SerializeToString(), SPEC)
    assert out["tags"].indices.shape == (0, 1) and out["tags"].dense_shape.numpy().tolist() == [0]
    assert out["tags"].values.dtype == tf.string


def test_multi_dimensional_fixed_len_and_sequence_feature():
    record = make_example(img=np.arange(6, dtype=np.float32), seq=[1, 2, 3, 4]).SerializeToString()
    out = tf.io.parse_single_example(record, {
        "img": tf.io.FixedLenFeature([2, 3], tf.float32),
        "seq": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True),
        "none": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)})
    assert out["img"].numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out["seq"].shape == (2, 2) and out["seq"].numpy().tolist() == [[1, 2], [3, 4]]
    assert out["none"].shape == (0,) and out["none"].dtype == tf.float32


def test_missing_required_feature_names_the_key():
    record = make_example(x=[1.0, 2.0]).SerializeToString()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Feature: n .* is required"):
        tf.io.parse_single_example(record, {"n": tf.io.FixedLenFeature([], tf.int64)})


def test_wrong_count_and_wrong_type_name_the_key():
    record = make_example(x=[1.0, 2.0], n=3).SerializeToString()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: x.*Values size: 2 but "
                                                             r"output shape: \[3\]"):
        tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([3], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: n.*Data type: int64 but "
                                                             "expected type: float"):
        tf.io.parse_single_example(record, {"n": tf.io.FixedLenFeature([], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: x.*not a multiple"):
        tf.io.parse_single_example(record, {"x": tf.io.FixedLenSequenceFeature(
            [3], tf.float32, allow_missing=True)})


def test_corrupted_serialized_example():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example input"):
        tf.io.parse_single_example(b"\xff\xff\xff", {"n": tf.io.FixedLenFeature([], tf.int64)})


def test_configuration_errors():
    record = make_example(n=1).SerializeToString()
    with pytest.raises(ValueError, match="int32"):
        tf.io.parse_single_example(record, {"n": tf.io.FixedLenFeature([], tf.int32)})
    with pytest.raises(ValueError, match="Missing"):
        tf.io.parse_single_example(record, {})
    with pytest.raises(ValueError, match="allow_missing"):
        tf.io.parse_single_example(record, {"n": tf.io.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(ValueError, match="need to be known"):
        tf.io.parse_single_example(record, {"n": tf.io.FixedLenFeature([None], tf.int64)})
    with pytest.raises(ValueError, match="default_value"):
        tf.io.parse_single_example(record, {"n": tf.io.FixedLenFeature([2], tf.int64, [1])})
    with pytest.raises(TypeError, match="configuration"):
        tf.io.parse_single_example(record, {"n": tf.int64})
    with pytest.raises(ValueError, match="scalar"):
        tf.io.parse_single_example(tf.constant([record, record]), {
            "n": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(TypeError, match="tf.string"):
        tf.io.parse_single_example(tf.constant(1.0), {"n": tf.io.FixedLenFeature([], tf.int64)})


def test_feature_configs_are_tf_namedtuples():
    f = tf.io.FixedLenFeature([2], tf.float32)
    assert f.shape == [2] and f.dtype == tf.float32 and f.default_value is None
    assert tf.io.FixedLenSequenceFeature([], tf.int64).allow_missing is False
    assert tf.io.VarLenFeature(tf.string).dtype == tf.string
    assert f._fields == ("shape", "dtype", "default_value")


# -- parse_example (batches) ------------------------------------------------------------------
def test_parse_example_batch():
    batch = [make_example(x=[1.0, 2.0], n=1, s=b"a", tags=[b"p"], ids=[1, 2]),
             make_example(x=[3.0, 4.0], n=2, s=b"b", m=[5.0, 6.0], tags=[b"q", b"r", b"t"]),
             make_example(x=[5.0, 6.0], n=3, s=b"c")]
    out = tf.io.parse_example(tf.constant([e.SerializeToString() for e in batch]), SPEC)
    assert out["x"].shape == (3, 2) and out["x"].numpy()[:, 0].tolist() == [1.0, 3.0, 5.0]
    assert out["n"].numpy().tolist() == [1, 2, 3] and out["n"].dtype == tf.int64
    assert out["s"].numpy().tolist() == [b"a", b"b", b"c"]
    assert out["m"].numpy().tolist() == [[-1.0, -2.0], [5.0, 6.0], [-1.0, -2.0]]
    tags = out["tags"]
    assert tags.indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1], [1, 2]]
    assert tags.values.numpy().tolist() == [b"p", b"q", b"r", b"t"]
    assert tags.dense_shape.numpy().tolist() == [3, 3]
    assert tf.sparse.to_dense(out["ids"]).numpy().tolist() == [[1, 2], [0, 0], [0, 0]]


def test_parse_example_pads_sequence_features_with_default():
    batch = [make_example(v=[1.0, 2.0, 3.0]), make_example(v=[4.0]), make_example(w=1)]
    out = tf.io.parse_example([e.SerializeToString() for e in batch], {
        "v": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True,
                                           default_value=-1.0)})
    assert out["v"].numpy().tolist() == [[1, 2, 3], [4, -1, -1], [-1, -1, -1]]


def test_parse_example_error_names_example_and_index():
    batch = [make_example(n=1).SerializeToString(), make_example(m=1).SerializeToString()]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Name: second, Feature: n"):
        tf.io.parse_example(batch, {"n": tf.io.FixedLenFeature([], tf.int64)},
                            example_names=["first", "second"])


def test_parse_example_empty_batch_keeps_shapes():
    out = tf.io.parse_example(tf.constant(np.array([], dtype=object)), SPEC)
    assert out["x"].shape == (0, 2) and out["tags"].dense_shape.numpy().tolist() == [0, 0]


# -- inside tf.data ---------------------------------------------------------------------------
def test_parsing_inside_dataset_map(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(5):
            tags = {"tags": [b"t"] * i} if i else {}
            w.write(make_example(x=[float(i), 0.5], n=i, s=b"s%d" % i,
                                 **tags).SerializeToString())

    def parse(record):
        out = tf.io.parse_single_example(record, SPEC)
        return out["x"], out["n"], tf.sparse.to_dense(out["tags"], default_value=b"")

    ds = TFRecordDataset(path).map(parse)
    rows = [(x.numpy().tolist(), int(n), t.numpy().tolist()) for x, n, t in ds]
    assert rows[3] == ([3.0, 0.5], 3, [b"t"] * 3)
    batched = TFRecordDataset(path).batch(2).map(lambda r: tf.io.parse_example(r, SPEC)["n"])
    assert [b.numpy().tolist() for b in batched] == [[0, 1], [2, 3], [4]]


# -- decode_raw, serialize_tensor / parse_tensor ----------------------------------------------
def test_decode_raw():
    data = tf.constant([np.int16([1, -2]).tobytes(), np.int16([3, 4]).tobytes()])
    out = tf.io.decode_raw(data, tf.int16)
    assert out.dtype == tf.int16 and out.numpy().tolist() == [[1, -2], [3, 4]]
    big = tf.io.decode_raw(tf.constant(b"\x00\x01\x00\x02"), tf.uint16, little_endian=False)
    assert big.numpy().tolist() == [1, 2]
    f = tf.io.decode_raw(np.float32([1.5, -3]).tobytes(), tf.float32)
    assert f.dtype == tf.float32 and f.numpy().tolist() == [1.5, -3.0]
    padded = tf.io.decode_raw(tf.constant([b"\x01", b"\x02\x03\x04"]), tf.uint8, fixed_length=2)
    assert padded.numpy().tolist() == [[1, 0], [2, 3]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        tf.io.decode_raw(tf.constant([b"ab", b"abcd"]), tf.uint8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="multiple of 4"):
        tf.io.decode_raw(tf.constant(b"abc"), tf.float32)


def test_serialize_tensor_matches_hand_built_tensor_proto():
    # TensorProto: dtype = 1 (DT_FLOAT = 1), tensor_shape = 2 {dim = 2 {size = 1}},
    # tensor_content = 4.
    shape = length_delimited(2, length_delimited(2, tag(1, 0) + varint(2)))
    expected = tag(1, 0) + varint(1) + shape + length_delimited(
        4, np.float32([1, 2]).tobytes())
    assert tf.io.serialize_tensor(tf.constant([1.0, 2.0])).numpy() == expected
    scalar = tag(1, 0) + varint(1) + length_delimited(2, b"") + length_delimited(
        4, np.float32(3).tobytes())
    assert tf.io.serialize_tensor(tf.constant(3.0)).numpy() == scalar
    strings = tf.io.serialize_tensor(tf.constant([b"a"])).numpy()
    assert strings == tag(1, 0) + varint(7) + length_delimited(
        2, length_delimited(2, tag(1, 0) + varint(1))) + length_delimited(8, b"a")


@pytest.mark.parametrize("value", [np.float32([[1, 2], [3, 4]]), np.int64(-5),
                                   np.array([b"x", b"yz"], dtype=object), np.bool_([True, False]),
                                   np.float16([0.5]), np.complex128([1 - 2j]),
                                   np.zeros((0, 3), np.int32), np.uint8([255])])
def test_serialize_parse_tensor_round_trip(value):
    t = tf.constant(value)
    back = tf.io.parse_tensor(tf.io.serialize_tensor(t), t.dtype)
    assert back.dtype == t.dtype and back.shape == t.shape
    assert np.array_equal(back.numpy(), t.numpy())


def test_parse_tensor_type_mismatch_and_typed_fields():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Type mismatch"):
        tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant(1.0)), tf.int32)
    # a TensorProto with one float_val (field 5) for shape [3]: the value fills the shape
    wire = tag(1, 0) + varint(1) + length_delimited(
        2, length_delimited(2, tag(1, 0) + varint(3))) + length_delimited(
        5, struct.pack("<f", 7.0))
    assert tf.io.parse_tensor(wire, tf.float32).numpy().tolist() == [7.0, 7.0, 7.0]


# -- files -------------------------------------------------------------------------------------
def test_read_and_write_file(tmp_path):
    path = str(tmp_path / "sub" / "f.bin")
    tf.io.write_file(path, tf.constant(b"\x00payload"))
    content = tf.io.read_file(path)
    assert content.dtype == tf.string and content.shape == () and content.numpy() == b"\x00payload"
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        tf.io.read_file(str(tmp_path / "nope"))


def test_gfile(tmp_path):
    gfile = tf.io.gfile
    d = str(tmp_path / "a" / "b")
    gfile.makedirs(d)
    assert gfile.isdir(d) and gfile.exists(d)
    with gfile.GFile(d + "/x.txt", "w") as f:
        f.write("hello")
    with gfile.GFile(d + "/x.txt") as f:
        assert f.read() == "hello"
    assert gfile.glob(str(tmp_path / "a" / "*" / "*.txt")) == [d + "/x.txt"]
    assert gfile.listdir(d) == ["x.txt"]
    gfile.copy(d + "/x.txt", d + "/y.txt")
    with pytest.raises(tf.errors.AlreadyExistsError):
        gfile.copy(d + "/x.txt", d + "/y.txt")
    gfile.rename(d + "/y.txt", d + "/z.txt")
    gfile.remove(d + "/z.txt")
    with pytest.raises(tf.errors.NotFoundError):
        gfile.remove(d + "/z.txt")
    with pytest.raises(tf.errors.NotFoundError):
        gfile.GFile(d + "/none.txt", "rb")
    gfile.rmtree(str(tmp_path / "a"))
    assert not gfile.exists(d)


# -- tf.sparse ---------------------------------------------------------------------------------
def test_sparse_tensor_and_to_dense():
    st = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=[5, 7], dense_shape=[3, 2])
    assert st.indices.dtype == tf.int64 and st.dense_shape.dtype == tf.int64
    assert st.shape == (3, 2) and st.dtype == tf.int32
    assert tf.sparse.to_dense(st).numpy().tolist() == [[0, 5], [0, 0], [7, 0]]
    assert tf.sparse.to_dense(st, default_value=-1).numpy().tolist() == [[-1, 5], [-1, -1],
                                                                         [7, -1]]
    with pytest.raises(ValueError, match="rank"):
        tf.sparse.SparseTensor(indices=[0, 1], values=[1, 2], dense_shape=[2])


def test_sparse_to_dense_validates_indices_and_reorder_fixes_order():
    st = tf.sparse.SparseTensor([[1], [0]], [1.0, 2.0], [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of order"):
        tf.sparse.to_dense(st)
    assert tf.sparse.to_dense(tf.sparse.reorder(st)).numpy().tolist() == [2.0, 1.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="repeated"):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[0], [0]], [1.0, 2.0], [2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[3]], [1.0], [2]))


def test_sparse_from_dense_and_gradient_through_to_dense():
    st = tf.sparse.from_dense(tf.constant([[0.0, 1.5], [2.5, 0.0]]))
    assert st.indices.numpy().tolist() == [[0, 1], [1, 0]]
    assert st.values.numpy().tolist() == [1.5, 2.5]
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        dense = tf.sparse.to_dense(tf.sparse.SparseTensor([[0], [2]], v * 3.0, [4]))
        loss = tf.reduce_sum(dense * tf.constant([1.0, 10.0, 100.0, 1000.0]))
    assert tape.gradient(loss, v).numpy().tolist() == [3.0, 300.0]


def test_feature_dict_changes_are_seen_between_calls():
    record = make_example(a=1, b=2.0).SerializeToString()
    spec = {"a": tf.io.FixedLenFeature([], tf.int64)}
    assert list(tf.io.parse_single_example(record, spec)) == ["a"]
    spec["b"] = tf.io.FixedLenFeature([], tf.float32)
    assert float(tf.io.parse_single_example(record, spec)["b"]) == 2.0
    spec["a"] = tf.io.FixedLenFeature([], tf.int64, default_value=9)
    spec["c"] = tf.io.FixedLenFeature([], tf.int64, default_value=tf.constant(4, tf.int64))
    out = tf.io.parse_single_example(record, spec)
    assert int(out["a"]) == 1 and int(out["c"]) == 4


def test_empty_feature_is_an_empty_list_of_any_type():
    ex = tf.train.Example()
    ex.features.feature["e"].SetInParent()  # a Feature with no list set
    record = ex.SerializeToString()
    out = tf.io.parse_single_example(record, {"e": tf.io.VarLenFeature(tf.float32)})
    assert out["e"].values.shape == (0,) and out["e"].values.dtype == tf.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: e.*Values size: 0"):
        tf.io.parse_single_example(record, {"e": tf.io.FixedLenFeature([], tf.int64)})


def test_ragged_feature_parses_one_ragged_row_per_example():
    """The ragged guide's `tf.io.RaggedFeature` (values only), then a dataset of the rows
    batching back into ragged tensors."""
    batch = [make_example(colors=[b"red", b"blue"], lengths=[7]).SerializeToString(),
             make_example(colors=[b"orange"]).SerializeToString(),  # no lengths at all
             make_example(colors=[b"black", b"yellow"], lengths=[1, 3]).SerializeToString()]
    spec = {"colors": tf.io.RaggedFeature(tf.string),
            "lens": tf.io.RaggedFeature(tf.int64, value_key="lengths")}
    parsed = tf.io.parse_example(batch, spec)
    assert parsed["colors"].to_list() == [[b"red", b"blue"], [b"orange"], [b"black", b"yellow"]]
    assert parsed["lens"].to_list() == [[7], [], [1, 3]]
    one = tf.io.parse_single_example(batch[2], spec)
    assert one["lens"].numpy().tolist() == [1, 3]
    ds = tf.data.Dataset.from_tensor_slices(parsed).batch(2)
    first = next(iter(ds))
    assert first["colors"].to_list() == [[b"red", b"blue"], [b"orange"]]
    # rows of equal length batch ragged too, and so do unbatched rows batched again
    again = list(ds.unbatch().skip(1).batch(2))[0]["lens"]
    assert isinstance(again, tf.RaggedTensor) and again.to_list() == [[], [1, 3]]
    same = next(iter(tf.data.Dataset.from_tensor_slices(
        tf.ragged.constant([[1], [2], [3, 4]])).batch(2)))
    assert isinstance(same, tf.RaggedTensor) and same.to_list() == [[1], [2]]
    with pytest.raises(NotImplementedError, match="partitions"):
        tf.io.RaggedFeature(tf.int64, partitions=[("row_lengths", "lengths")])
