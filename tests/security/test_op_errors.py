"""Odd inputs to public ops get TensorFlow's error classes, never a bare Python exception:
empty softmax is empty (as TF), matmul on strings or bools is InvalidArgumentError, huge
`eye`/`linspace`/`repeat`/`ragged.range`/`padded_batch` are ResourceExhaustedError before
anything is allocated (as `zeros` and `fill`), `num_parallel_calls` is checked as TF's
kernels check it; and a bounded fuzz over the public functions finds no bare exception."""
import inspect
import linecache
import os
import signal
import subprocess
import sys
import traceback
import types
import warnings

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tests.security.conftest import tree_state

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HUGE = 10 ** 7  # a 10^7 x 10^7 float32 matrix: 400 TB, more memory than any machine has


# -- the cases --------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax, tf.math.softmax])
@pytest.mark.parametrize("shape", [[0], [2, 0], [0, 3], [0, 0, 2]])
def test_softmax_of_an_empty_tensor_is_empty(fn, shape):
    out = fn(tf.zeros(shape))
    assert out.shape.as_list() == shape and out.dtype == tf.float32


@pytest.mark.parametrize("a, b", [(["a"], ["b"]), ("a", 1.0), (True, True)])
def test_matmul_on_strings_or_bools_is_invalid_argument(a, b):
    x, y = tf.constant([[a]]), tf.constant([[b]])
    with pytest.raises(errors.InvalidArgumentError, match="MatMul"):
        tf.matmul(x, y)
    with pytest.raises(errors.InvalidArgumentError, match="MatMul"):
        x @ y  # noqa: B018 - the operator path


@pytest.mark.parametrize("make", [
    lambda: tf.eye(HUGE), lambda: tf.eye(10, batch_shape=[HUGE, HUGE]),
    lambda: tf.eye(HUGE, 2 * HUGE, dtype=tf.float64), lambda: tf.linspace(0.0, 1.0, 10 ** 13),
    lambda: tf.linspace(tf.zeros([HUGE]), 1.0, HUGE), lambda: tf.repeat([1, 2], 10 ** 13),
    lambda: tf.ragged.range(10 ** 13), lambda: tf.zeros([HUGE, HUGE]),
    lambda: tf.fill([HUGE, HUGE], 1.0), lambda: tf.range(10 ** 13)])
def test_huge_results_are_resource_exhausted_before_allocating(make):
    with pytest.raises(errors.ResourceExhaustedError, match="OOM when allocating"):
        make()


@pytest.mark.parametrize("value", [-7, -2, 0, tf.constant(-7)])
def test_num_parallel_calls_other_than_autotune_or_positive_is_invalid(value):
    ds = tf.data.Dataset.range(4)
    with pytest.raises(errors.InvalidArgumentError, match="num_parallel_calls"):
        ds.map(lambda x: x, num_parallel_calls=value)
    with pytest.raises(errors.InvalidArgumentError, match="num_parallel_calls"):
        ds.interleave(lambda x: tf.data.Dataset.range(2), num_parallel_calls=value)
    with pytest.raises(errors.InvalidArgumentError, match="num_parallel_calls"):
        ds.batch(2, num_parallel_calls=value)


@pytest.mark.parametrize("value", [1.5, "x", True, [2]])
def test_num_parallel_calls_must_be_an_integer(value):
    with pytest.raises(TypeError, match="num_parallel_calls"):
        tf.data.Dataset.range(4).map(lambda x: x, num_parallel_calls=value)


@pytest.mark.parametrize("value", [None, tf.data.AUTOTUNE, 1, 3, np.int64(2), tf.constant(2)])
def test_valid_num_parallel_calls_still_map(value):
    ds = tf.data.Dataset.range(5).map(lambda x: x * 2, num_parallel_calls=value)
    assert sorted(int(v) for v in ds) == [0, 2, 4, 6, 8]


# -- found by the fuzz --------------------------------------------------------------------------
@pytest.mark.parametrize("call, cls", [
    (lambda: tf.split(tf.constant(1.0), 1), errors.InvalidArgumentError),
    (lambda: tf.argmax(tf.ones([2, 2]), axis=tf.zeros([0], tf.int32)),
     errors.InvalidArgumentError),
    (lambda: tf.concat([tf.ones([2])], axis=[0, 0]), errors.InvalidArgumentError),
    (lambda: tf.unstack(tf.ones([2]), axis=tf.constant([0, 0])), errors.InvalidArgumentError),
    (lambda: tf.math.top_k(tf.constant(1.0), 1), errors.InvalidArgumentError),
    (lambda: tf.einsum(tf.zeros([0]), tf.ones([2])), TypeError),
    (lambda: tf.tensordot(tf.constant(1.0), tf.ones([2]), [[0.5], [0]]),
     errors.InvalidArgumentError),
    (lambda: tf.tensordot(tf.ones([2]), tf.ones([2]), [[0], [0], [0]]), ValueError),
    (lambda: tf.tensordot(tf.ones([2]), tf.ones([2]), -1), ValueError),
    (lambda: tf.ragged.range([1, 2], [3, 4, 5]), errors.InvalidArgumentError),
    (lambda: tf.ragged.range([1], [2], [0]), errors.InvalidArgumentError),
    (lambda: tf.sparse.reorder(tf.ones([2])), TypeError),
    (lambda: tf.data.Dataset.range(3).padded_batch(2, padded_shapes=-7), ValueError),
    (lambda: tf.data.Dataset.range(3).padded_batch(2, padding_values="x"), TypeError),
    (lambda: tf.data.Dataset.range(3).padded_batch(2, padding_values=tf.zeros([0], tf.int64)),
     ValueError),
    (lambda: list(tf.data.Dataset.range(3).map(lambda x: tf.fill([x + 1], x))
                  .padded_batch(2, padded_shapes=[10 ** 12])), errors.ResourceExhaustedError),
    (lambda: tf.data.Dataset.range(3).interleave(lambda x: tf.data.Dataset.range(2),
                                                 cycle_length=10 ** 13),
     errors.ResourceExhaustedError),
])
def test_odd_arguments_get_tensorflow_error_classes(call, cls):
    with pytest.raises(cls):
        call()


def test_fixed_functions_still_compute():
    assert tf.ragged.range([3, 0], [5, 2]).to_list() == [[3, 4], [0, 1]]
    r = tf.ragged.range([3.0, 0], [5, 2], 0.5)
    assert r.dtype == tf.float32 and r.to_list()[0] == [3.0, 3.5, 4.0, 4.5]
    assert tf.ragged.boolean_mask(tf.constant([1, 2, 3]), [True, False, True]).numpy() \
        .tolist() == [1, 3]
    assert [int(v) for v in tf.data.Dataset.range(4).shuffle(4, seed=-7)] != []
    assert tf.io.decode_csv(["1,2"], [tf.constant(0), tf.constant(5)])[1].numpy().tolist() \
        == [2]
    assert tf.tensordot(tf.ones([2, 3]), tf.ones([3]), tf.constant(1)).numpy().tolist() == \
        [3.0, 3.0]
    assert tf.linalg.diag([b"a"], padding_value=b"").numpy().tolist() == [[b"a"]]


# -- a bounded fuzz over the public functions ----------------------------------------------------
_SPACES = ("", "math.", "nn.", "linalg.", "strings.", "random.", "image.", "bitwise.", "sparse.",
           "ragged.", "io.", "debugging.")
# side effects (files, printing, global state) or a Python callable as the first argument
_SKIP = {"print", "py_function", "numpy_function", "function", "io.write_file",
         "io.read_file", "io.matching_files", "debugging.enable_check_numerics",
         "debugging.disable_check_numerics", "random.set_seed", "io.write_graph", "map_fn",
         "vectorized_map", "while_loop", "cond", "case", "switch_case", "scan", "foldl",
         "foldr", "custom_gradient", "recompute_grad", "grad_pass_through", "init_scope",
         "debugging.set_log_device_placement", "io.TFRecordWriter", "io.gfile"}
_HANG = 60  # seconds one call may take before it counts as hung (never as slow)


def _odd_inputs():
    return [tf.zeros([0]), tf.zeros([2, 0]), tf.zeros([0], tf.int32), tf.constant(["a", "b"]),
            tf.constant([["a"]]), tf.constant("x"), 10 ** 12, [10 ** 6, 10 ** 6, 10 ** 3], -5,
            [-1, -3], None, tf.constant(1.0), tf.constant([True, False]),
            tf.constant([float("nan"), float("inf")]),
            tf.constant([np.iinfo(np.int64).min], tf.int64), [[[[[[1.0]]]]]]]


def _deliberate(exc):
    """Whether `exc` is an error class TensorFlow gives for such input: its own classes, or
    TypeError/ValueError for bad Python arguments raised in tensorlite's code (not deep in
    NumPy), or AttributeError where tensorlite raises it on purpose as TF does
    (convert_image_dtype). IndexError, KeyError, ZeroDivisionError, MemoryError,
    RecursionError and NumPy's own errors are bare."""
    if isinstance(exc, (errors.OpError, NotImplementedError)):
        return True
    if isinstance(exc, (LookupError, ArithmeticError, MemoryError, RecursionError)):
        return False  # IndexError (numpy's AxisError too), KeyError, ZeroDivisionError, ...
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    ours = f"{os.sep}tensorlite{os.sep}" in frame.filename
    if isinstance(exc, AttributeError):
        line = linecache.getline(frame.filename, frame.lineno).strip()
        return ours and line.startswith("raise")
    return isinstance(exc, (TypeError, ValueError)) and ours and \
        not type(exc).__module__.startswith("numpy")


class _Hung(BaseException):
    pass


def _call(fn, args):
    """None, or a description of the bare exception (or hang) `fn(*args)` ends in."""
    signal.alarm(_HANG)
    try:
        fn(*args)
    except _Hung:
        return "hung"
    except Exception as e:  # noqa: BLE001 - classified here
        if not _deliberate(e):
            frame = traceback.extract_tb(e.__traceback__)[-1]
            return f"{type(e).__name__}: {str(e)[:80]} ({frame.filename}:{frame.lineno})"
    finally:
        signal.alarm(0)
    return None


def _functions():
    for prefix in _SPACES:
        space = tf
        for part in prefix.rstrip(".").split(".") if prefix else ():
            space = getattr(space, part)
        for attr in sorted(dir(space)):
            fn = getattr(space, attr)
            if attr.startswith("_") or prefix + attr in _SKIP or \
                    not isinstance(fn, types.FunctionType):
                continue
            try:
                params = list(inspect.signature(fn).parameters.values())
            except (TypeError, ValueError):
                continue
            required = [p for p in params if p.default is p.empty and
                        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if params:
                yield prefix + attr, fn, len(required)


def fuzz_main():
    """Runs in a subprocess (see the test): memory capped, so that an allocation nothing
    checked is a MemoryError to report rather than the machine's memory."""
    import resource  # noqa: PLC0415 - POSIX only, and only in the subprocess
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    warnings.simplefilter("ignore")

    def hung(*_):
        raise _Hung()
    signal.signal(signal.SIGALRM, hung)
    found = []
    for name, fn, n in _functions():
        for value in _odd_inputs():
            other = tf.constant([1.0, 2.0])
            for args in ([value] + [other] * (n - 1), [value] * max(n, 1)):
                bare = _call(fn, args)
                if bare:
                    found.append(f"{name}{tuple(type(a).__name__ for a in args)}: {bare}")
    print("\n".join(found) if found else "NO BARE ERRORS")


def test_fuzz_finds_no_bare_exceptions(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = tree_state(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", "from tests.security import test_op_errors as t; t.fuzz_main()"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "NO BARE ERRORS", proc.stdout[-5000:]
    assert tree_state(tmp_path) == before  # no op wrote a file where it ran
