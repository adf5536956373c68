"""bench/ab_trees.py reads the benches' table rows as measures and compares two trees."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ab_trees  # noqa: E402 - a script beside the benches


def test_table_rows_are_measures_and_prose_is_not():
    text = """measure                                     us/op  x NumPy
tensorlite add                              1.890     2.24
conv2d [1,8,8,3]x[3,3,3,4]          20.61        -      -      90.29
  numpy 1 thread               1860.6     1.00x NumPy 1 thread
ratios: add 2.24x (goal <= 4), add under tape 4.79x (goal <= 8)
import tensorlite                          0.330 s    (goal < 0.3 s)
tensorlite add                              9.999     9.99
  cnn    tensorlite      840/s"""
    assert ab_trees.measures(text) == {"tensorlite add": 1.89,
                                       "conv2d [1,8,8,3]x[3,3,3,4]": 20.61,
                                       "numpy 1 thread": 1860.6, "import tensorlite": 0.33,
                                       "tensorlite add #2": 9.999, "cnn tensorlite": 840}


def test_compare_takes_medians_per_tree_and_the_ratio():
    new = [{"add": 2.0, "only new": 1.0}, {"add": 4.0}, {"add": 3.0}]
    base = [{"add": 1.0}, {"add": 1.5}, {"add": 9.0}]
    assert ab_trees.compare(new, base) == [("add", 3.0, 1.5, 2.0)]
