import io

import numpy as np

import tensorlite as tf


def test_print_values_like_tf():
    out = io.StringIO()
    tf.print("Execution time:", 0.25, tf.constant([1, 2]), tf.constant("abc"), output_stream=out)
    assert out.getvalue() == "Execution time: 0.25 [1 2] abc\n"


def test_print_summarizes_long_tensors():
    out = io.StringIO()
    tf.print(tf.constant(np.arange(100)), output_stream=out)
    assert out.getvalue() == "[0 1 2 ... 97 98 99]\n"  # TF's documented output
    out = io.StringIO()
    tf.print(tf.constant(np.arange(100)), output_stream=out, summarize=-1)
    assert "50" in out.getvalue()


def test_print_to_file(tmp_path):
    path = tmp_path / "log.txt"
    tf.print("a", tf.constant(1.5), output_stream=f"file://{path}")
    assert path.read_text() == "a 1.5\n"


def test_print_numbers_as_tf_prints_them():
    out = io.StringIO()
    tf.print(tf.constant([1.0, 2.5, 1 / 3]), tf.constant([[1, -1], [10, 2]]),
             tf.constant(["a", "b"]), output_stream=out)
    # fewest digits (6, else 9 for float32) that read back; no padding; string elements
    # quoted; rows of a matrix on their own lines
    assert out.getvalue() == '[1 2.5 0.333333343] [[1 -1]\n [10 2]] ["a" "b"]\n'
