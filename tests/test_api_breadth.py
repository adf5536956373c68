"""What real TF 2 programs do in their first lines (issue 10, part 1), each written as the
user's code would be: conversions of pandas and array-likes, formatting, boolean masks,
version strings, top-level aliases, devices, debugging asserts."""
import numpy as np
import pytest

import tensorlite as tf

pd = pytest.importorskip("pandas")


# -- conversions ---------------------------------------------------------------------------
def test_pandas_dataframe_and_series_convert():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4, 5, 6], "s": ["x", "y", "z"]})
    t = tf.constant(df[["a", "b"]])
    np.testing.assert_array_equal(t.numpy(), df[["a", "b"]].to_numpy())
    assert t.dtype == tf.float64
    assert tf.convert_to_tensor(df["b"]).dtype == tf.int64
    assert tf.convert_to_tensor(df["s"]).numpy().tolist() == [b"x", b"y", b"z"]
    target = df.pop("a")
    ds = tf.data.Dataset.from_tensor_slices((dict(df), target.values))
    features, label = next(iter(ds.batch(2)))
    assert features["b"].numpy().tolist() == [4, 5] and label.numpy().tolist() == [1.0, 2.0]
    assert next(iter(tf.data.Dataset.from_tensor_slices(df[["b"]]))).numpy().tolist() == [4]


def test_object_with_array_protocol_converts():
    class Grid:
        def __array__(self, dtype=None, copy=None):
            return np.arange(6, dtype=np.float32).reshape(2, 3)

    assert tf.constant(Grid()).shape == (2, 3)
    assert tf.reduce_sum(tf.convert_to_tensor(Grid())).numpy() == 15.0


def test_mixed_object_column_is_a_clear_error():
    with pytest.raises(TypeError, match="all numbers or all strings"):
        tf.constant(pd.Series([1, "a", None]))


def test_constant_refuses_lossy_python_casts():
    with pytest.raises(TypeError, match="Cannot convert 2.2 to EagerTensor of dtype int32"):
        tf.constant(2.2, dtype=tf.int32)
    assert tf.constant(2, dtype=tf.float32).numpy() == 2.0
    assert tf.constant(np.array([2.7]), dtype=tf.int32).numpy().tolist() == [2]  # NumPy casts


# -- tensors in Python -----------------------------------------------------------------------
def test_format_spec_on_scalar_tensor():
    loss = tf.constant(0.123456789)
    assert f"{loss:2.5f}" == "0.12346"
    assert f"{tf.constant(3)}" == "3"
    assert "{:.1%}".format(tf.constant(0.5)) == "50.0%"
    assert f"{tf.Variable(0.25):.2f}" == "0.25"


def test_boolean_mask_indexing():
    t = tf.constant([[1, 2], [3, 4], [5, 6]])
    mask = np.array([True, False, True])
    assert t[mask].numpy().tolist() == [[1, 2], [5, 6]]
    assert t[t > 2].numpy().tolist() == [3, 4, 5, 6]
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[mask] * 2.0)
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 0.0, 2.0]


def test_version_strings():
    assert tf.__version__ == tf.version.VERSION
    major, minor = (int(p) for p in tf.version.VERSION.split(".")[:2])
    assert (major, minor) >= (2, 0)


def test_top_level_aliases():
    assert tf.optimizers.Adam is tf.keras.optimizers.Adam
    assert tf.losses.MeanSquaredError is tf.keras.losses.MeanSquaredError
    assert tf.metrics.Mean is tf.keras.metrics.Mean
    assert tf.initializers.GlorotUniform is tf.keras.initializers.GlorotUniform
    assert float(tf.activations.relu(tf.constant(-1.0))) == 0.0
    k = tf.keras.backend
    k.clear_session()
    assert k.floatx() == "float32" and k.epsilon() == 1e-7
    assert k.image_data_format() == "channels_last"


def test_set_floatx_makes_layers_build_in_that_dtype():
    k = tf.keras.backend
    k.set_floatx("float64")
    try:
        dense = tf.keras.layers.Dense(2)
        y = dense(tf.ones((1, 3)))
        assert k.floatx() == "float64"
        assert dense.kernel.dtype == tf.float64 and y.dtype == tf.float64
    finally:
        k.set_floatx("float32")
    assert tf.keras.layers.Dense(2)(tf.ones((1, 3))).dtype == tf.float32


# -- devices -----------------------------------------------------------------------------------
def test_device_blocks_parse_and_soft_place():
    for i in range(2):
        with tf.device("/gpu:%i" % i):
            x = tf.constant(1.0) + 1
    with tf.device("/cpu:0"), tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
        assert float(x * 2) == 4.0
    with pytest.raises(ValueError, match="malformed device name"):
        with tf.device("/gpu:zero"):
            pass
    tf.config.set_soft_device_placement(False)
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="soft placement"):
            with tf.device("/gpu:0"):
                pass
    finally:
        tf.config.set_soft_device_placement(True)


def test_logical_cpu_devices():
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:  # the usual preamble runs on a machine without GPUs
        tf.config.experimental.set_memory_growth(gpu, True)
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
    try:
        names = [d.name for d in tf.config.list_logical_devices("CPU")]
        assert names == ["/device:CPU:0", "/device:CPU:1"]
        tf.config.set_soft_device_placement(False)
        with tf.device("/cpu:1"):
            pass
    finally:
        tf.config.set_soft_device_placement(True)
        tf.config.set_logical_device_configuration(cpu, None)
    assert len(tf.config.list_logical_devices()) == 1


# -- debugging -------------------------------------------------------------------------------
def test_debugging_asserts_eager():
    tf.debugging.assert_equal(tf.constant([1, 2]), [1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="x == y did not hold"):
        tf.debugging.assert_equal(tf.constant([1, 2]), [1, 3], message="labels")
    tf.debugging.assert_near(tf.constant(1.0), 1.0 + 1e-7)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.debugging.assert_near(tf.constant(1.0), 1.1)
    tf.debugging.assert_rank(tf.zeros([2, 3]), 2)
    with pytest.raises(ValueError, match="rank 3"):
        tf.debugging.assert_rank(tf.zeros([2, 3]), 3)
    tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", "Q")), (tf.zeros([2]), ("N",))])
    with pytest.raises(ValueError, match="'N' must have size 2"):
        tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", 3)), (tf.zeros([4]), ("N",))])
    tf.debugging.assert_type(tf.zeros([1]), tf.float32)
    with pytest.raises(TypeError):
        tf.debugging.assert_type(tf.zeros([1]), tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad.*Inf"):
        tf.debugging.check_numerics(tf.constant([1.0, np.inf]), "bad")


def test_asserts_run_on_every_graph_call():
    @tf.function
    def safe_div(x, y):
        tf.debugging.assert_positive(y, message="y must be positive")
        tf.Assert(tf.reduce_all(x >= 0), ["x negative:", x])
        return tf.ensure_shape(x / y, [None])

    assert safe_div(tf.constant([2.0]), tf.constant([1.0])).numpy().tolist() == [2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="y must be positive"):
        safe_div(tf.constant([2.0]), tf.constant([-1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="x negative"):
        safe_div(tf.constant([-2.0]), tf.constant([1.0]))
    assert safe_div.experimental_get_tracing_count() == 1


def test_enable_check_numerics_names_the_op():
    tf.debugging.enable_check_numerics()
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Log"):
            tf.math.log(tf.constant([-1.0]))
    finally:
        tf.debugging.disable_check_numerics()
    assert np.isnan(tf.math.log(tf.constant([-1.0])).numpy()[0])


def test_pretty_printed_concrete_signatures():
    @tf.function
    def scale(x, factor=2):
        return x * factor

    scale(tf.zeros([2]))
    scale(tf.zeros([3], tf.int32), 3)
    text = scale.pretty_printed_concrete_signatures()
    assert "scale(x)\n  Args:\n    x: float32 Tensor, shape=(2,)\n  Returns:\n    float32 " \
           "Tensor, shape=(2,)" in text
    assert "x: int32 Tensor, shape=(3,)" in text


def test_recording_tape_raises_gc_threshold_and_restores_it():
    import gc
    before = gc.get_threshold()
    with tf.GradientTape(persistent=True) as tape:
        x = tf.constant(1.0)
        tape.watch(x)
        y = x * x
        assert gc.get_threshold()[0] >= 10_000 and gc.get_threshold()[1] >= 100
        with tf.GradientTape() as inner:
            inner.watch(x)
            z = x * 3
        assert gc.get_threshold()[0] >= 10_000  # still recording the outer tape
    assert gc.get_threshold() == before
    assert float(tape.gradient(y, x)) == 2.0 and float(inner.gradient(z, x)) == 3.0


def test_model_get_layer_by_name_and_index():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, name="a"),
                                 tf.keras.layers.Dense(1, name="b")])
    assert model.get_layer("b") is model.layers[1]
    assert model.get_layer(index=0) is model.layers[0]
    assert model.get_layer(index=-1).name == "b"
    with pytest.raises(ValueError, match="No such layer: c"):
        model.get_layer("c")
    with pytest.raises(ValueError, match="only has 2 layers"):
        model.get_layer(index=5)
    with pytest.raises(ValueError, match="Provide only"):
        model.get_layer("a", index=0)


def test_keras_activations_relu_and_elu_take_keras_arguments():
    x = tf.constant([-2.0, -0.5, 0.5, 3.0])
    act = tf.keras.activations
    # above the threshold x, else 0; then clipped to [0, max_value]; alpha below it
    np.testing.assert_allclose(act.relu(x, threshold=-1.0, max_value=2.0).numpy(),
                               [0.0, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(act.relu(x, alpha=0.1).numpy(), [-0.2, -0.05, 0.5, 3.0],
                               rtol=1e-6)
    np.testing.assert_allclose(act.elu(x, alpha=0.5).numpy(),
                               [0.5 * np.expm1(-2.0), 0.5 * np.expm1(-0.5), 0.5, 3.0],
                               rtol=1e-6)
    np.testing.assert_allclose(act.get("elu")(x).numpy(),
                               [np.expm1(-2.0), np.expm1(-0.5), 0.5, 3.0], rtol=1e-6)


def test_tf2_initializer_aliases_and_datatype_enum_dtypes():
    """TF 2 code writes `tf.random_normal_initializer()(shape)` and, from the TF guides,
    `tf.zeros(1, 1)` (dtype given as DataType enum value 1: float32)."""
    init = tf.random_normal_initializer(stddev=0.0, mean=3.0)
    np.testing.assert_array_equal(init(shape=(2, 2), dtype="float32").numpy(), 3.0)
    assert tf.zeros_initializer()((2,)).numpy().tolist() == [0.0, 0.0]
    assert tf.constant_initializer(7)((1,)).numpy().tolist() == [7.0]
    assert tf.zeros(1, 1).dtype == tf.float32 and tf.zeros(1, 1).shape == (1,)
    assert [tf.as_dtype(v) for v in (1, 3, 9, 10, 19)] == [tf.float32, tf.int32, tf.int64,
                                                           tf.bool, tf.float16]
    assert tf.float64.as_datatype_enum == 2 and tf.string.as_datatype_enum == 7
    with pytest.raises(TypeError, match="Cannot convert 99"):
        tf.as_dtype(99)


def test_a_fully_known_tensor_shape_converts_to_a_tensor():
    """`tf.reduce_prod(layer.kernel.shape)` (the advanced autodiff guide)."""
    layer = tf.keras.layers.Dense(8)
    layer.build((None, 5))
    assert int(tf.reduce_prod(layer.kernel.shape)) == 40
    assert tf.constant(tf.TensorShape([2, 3])).numpy().tolist() == [2, 3]
    assert tf.convert_to_tensor(tf.TensorShape([2, 3]), dtype=tf.int64).dtype == tf.int64
    with pytest.raises(ValueError, match="partially known TensorShape"):
        tf.convert_to_tensor(tf.TensorShape([None, 3]))
