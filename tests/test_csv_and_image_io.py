"""CSV parsing (decode_csv, CsvDataset, make_csv_dataset) against Python's csv module and
pandas on the same files; PNG/JPEG coding against an independent PNG codec written here
with zlib; bounding-box ops against their definitions; crafted bad inputs."""
import csv
import struct
import zlib

import numpy as np
import pytest

import tensorlite as tf

pytest.importorskip("PIL")

CSV_TEXT = 'a,b,name,target\n1,2.5,x,0\n2,,"y, z",1\n3,4.0,"say ""hi""",1\n'


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV_TEXT)
    return str(path)


def test_decode_csv_matches_csv_module():
    lines = CSV_TEXT.splitlines()[1:]
    a, b, name, target = tf.io.decode_csv(lines, record_defaults=[[0], [-1.0], ["?"], [0]])
    rows = list(csv.reader(lines))
    assert a.numpy().tolist() == [int(r[0]) for r in rows]
    assert b.numpy().tolist() == [float(r[1]) if r[1] else -1.0 for r in rows]
    assert [s.decode() for s in name.numpy()] == [r[2] for r in rows]
    assert a.dtype == tf.int32 and b.dtype == tf.float32 and name.dtype == tf.string


def test_decode_csv_required_and_malformed():
    with pytest.raises(tf.errors.InvalidArgumentError, match="required"):
        tf.io.decode_csv(["1,"], record_defaults=[[0], tf.float32])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 3"):
        tf.io.decode_csv(["1,2,3"], record_defaults=[[0], [0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32"):
        tf.io.decode_csv(["x,1"], record_defaults=[[0], [0]])


def test_decode_csv_in_a_dataset_map(csv_file):
    ds = tf.data.TextLineDataset(csv_file).skip(1).map(
        lambda line: tf.io.decode_csv(line, [[0], [0.0], [""], [0]], select_cols=None))
    assert [int(e[0]) for e in ds] == [1, 2, 3]


def test_csv_dataset_matches_pandas(csv_file):
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(csv_file)
    ds = tf.data.experimental.CsvDataset(csv_file, [tf.int32, [0.0], [""], [0]], header=True)
    rows = [tuple(t.numpy() for t in e) for e in ds]
    assert [r[0] for r in rows] == df["a"].tolist()
    assert [r[1] for r in rows] == df["b"].fillna(0.0).tolist()
    assert [r[2].decode() for r in rows] == df["name"].tolist()
    sel = tf.data.experimental.CsvDataset(csv_file, [[0], [0]], header=True,
                                          select_cols=[0, 3])
    assert [(int(x), int(y)) for x, y in sel] == list(zip(df["a"], df["target"]))


def test_make_csv_dataset_infers_types_and_splits_label(csv_file):
    ds = tf.data.experimental.make_csv_dataset(csv_file, batch_size=2, label_name="target",
                                               num_epochs=1, shuffle=False)
    batches = list(ds)
    features, label = batches[0]
    assert list(features) == ["a", "b", "name"]
    assert features["a"].dtype == tf.int32 and features["b"].dtype == tf.float32
    assert features["name"].dtype == tf.string and label.numpy().tolist() == [0, 1]
    assert sum(int(lab.shape[0]) for _, lab in batches) == 3
    forever = tf.data.experimental.make_csv_dataset(csv_file, batch_size=2, shuffle=False)
    assert len(list(forever.take(5))) == 5  # num_epochs=None repeats



def test_make_csv_dataset_ignore_errors_drops_malformed_records(tmp_path):
    """The CSV tutorial reads titanic with ignore_errors=True; the values are what real TF
    2.21 gives for this file (a short row, a long row and an unparsable float dropped)."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,survived\n1,2.5,0\n3,4.5,1\n5,6.5\n7,8.5,1,9\n9,1.5,0\n"
                    "2,x,1\n4,0.5,1\n")
    titanic_csv_ds = tf.data.experimental.make_csv_dataset(
        str(path), batch_size=2, label_name='survived', num_epochs=1, shuffle=False,
        ignore_errors=True, num_rows_for_inference=1)
    got = [({k: v.numpy().tolist() for k, v in batch.items()}, label.numpy().tolist())
           for batch, label in titanic_csv_ds]
    assert got == [({"a": [1, 3], "b": [2.5, 4.5]}, [0, 1]),
                   ({"a": [9, 4], "b": [1.5, 0.5]}, [0, 1])]
    strict = tf.data.experimental.make_csv_dataset(
        str(path), batch_size=2, label_name='survived', num_epochs=1, shuffle=False,
        num_rows_for_inference=1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(strict)


def test_decode_csv_empty_typed_tensor_default_is_a_required_column():
    """Hands-On ML ch. 13's parse_csv_line: `tf.constant([], dtype=tf.float32)` marks the
    target column required (float32), the features default to 0."""
    n_inputs = 8

    def parse_csv_line(line):
        defs = [0.] * n_inputs + [tf.constant([], dtype=tf.float32)]
        fields = tf.io.decode_csv(line, record_defaults=defs)
        return tf.stack(fields[:-1]), tf.stack(fields[-1:])

    x, y = parse_csv_line(b'4.2083,44.0,5.3232,0.9171,846.0,2.3370,37.47,-122.2,2.782')
    np.testing.assert_allclose(x.numpy(), [4.2083, 44.0, 5.3232, 0.9171, 846.0, 2.3370,
                                           37.47, -122.2], rtol=1e-6)
    assert y.dtype == tf.float32 and y.numpy().tolist() == [np.float32(2.782)]
    x, _ = parse_csv_line(b',,,,,,,,2.0')
    assert x.numpy().tolist() == [0.0] * 8
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 8 is required"):
        parse_csv_line(b'1,2,3,4,5,6,7,8,')

# -- an independent PNG codec (zlib only) ------------------------------------------------
def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + \
        struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png_rgb(a):
    h, w, _ = a.shape
    raw = b"".join(b"\x00" + a[r].tobytes() for r in range(h))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def read_png(data):
    """8-bit non-interlaced PNG -> [h, w, c] uint8, all five row filters."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8
    c = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw, stride = zlib.decompress(idat), w * c
    out = np.zeros((h, stride), np.int64)
    for r in range(h):
        f, line = raw[r * (stride + 1)], np.frombuffer(raw, np.uint8, stride,
                                                       r * (stride + 1) + 1).astype(np.int64)
        prev = out[r - 1] if r else np.zeros(stride, np.int64)
        cur = np.zeros(stride, np.int64)
        for i in range(stride):
            left = cur[i - c] if i >= c else 0
            ul = prev[i - c] if i >= c else 0
            pred = [0, left, prev[i], (left + prev[i]) // 2,
                    _paeth(left, prev[i], ul)][f]
            cur[i] = (line[i] + pred) & 0xFF
        out[r] = cur
    return out.reshape(h, w, c).astype(np.uint8)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def test_png_decode_of_an_independently_written_file():
    img = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    out = tf.io.decode_png(write_png_rgb(img))
    assert out.dtype == tf.uint8 and np.array_equal(out.numpy(), img)
    assert tf.io.decode_png(write_png_rgb(img), channels=1).shape == (5, 7, 1)
    assert tf.image.decode_image(write_png_rgb(img)).shape == (5, 7, 3)


def test_png_encode_read_by_the_independent_reader():
    img = np.random.default_rng(1).integers(0, 256, (6, 4, 4), dtype=np.uint8)
    data = tf.io.encode_png(img).numpy()
    assert np.array_equal(read_png(data), img)
    gray = img[:, :, :1]
    assert np.array_equal(read_png(tf.image.encode_png(gray).numpy()), gray)


def test_jpeg_roundtrip_and_marker():
    img = np.full((16, 16, 3), 120, np.uint8)
    img[:8] = 200
    data = tf.io.encode_jpeg(img, quality=95)
    assert bool(tf.io.is_jpeg(data))
    back = tf.io.decode_jpeg(data).numpy()
    assert back.shape == (16, 16, 3) and np.abs(back.astype(int) - img).max() <= 8


def test_crafted_image_bytes_are_clear_errors():
    for bad in (b"", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, b"GIF89a-not-really"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid"):
            tf.io.decode_png(bad)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not JPEG|not a valid"):
        tf.io.decode_jpeg(write_png_rgb(np.zeros((2, 2, 3), np.uint8)))


def test_sample_distorted_bounding_box_constraints():
    boxes = tf.constant([[[0.25, 0.25, 0.75, 0.75]]])
    for seed in range(20):
        begin, size, box = tf.image.sample_distorted_bounding_box(
            [40, 60, 3], boxes, seed=seed, min_object_covered=0.5,
            aspect_ratio_range=(0.5, 2.0), area_range=(0.1, 1.0))
        y, x, _ = begin.numpy()
        h, w, c = size.numpy()
        assert c == -1 and 0 <= y and y + h <= 40 and 0 <= x and x + w <= 60
        iy = max(0, min(30, y + h) - max(10, y))
        ix = max(0, min(45, x + w) - max(15, x))
        assert iy * ix / (20 * 30) >= 0.5 - 1e-9 or (h, w) == (40, 60)
        np.testing.assert_allclose(box.numpy()[0, 0], [y / 40, x / 60, (y + h) / 40,
                                                       (x + w) / 60], rtol=1e-6)
        crop = tf.slice(tf.zeros([40, 60, 3]), begin, size)
        assert crop.shape == (h, w, 3)


def test_draw_bounding_boxes_outline():
    img = tf.zeros([1, 5, 5, 3])
    out = tf.image.draw_bounding_boxes(img, [[[0.0, 0.0, 0.5, 0.5]]],
                                       colors=[[1.0, 0.0, 0.0, 1.0]]).numpy()[0, :, :, 0]
    expect = np.zeros((5, 5))
    expect[0, :3] = expect[2, :3] = expect[:3, 0] = expect[:3, 2] = 1
    assert np.array_equal(out, expect)
