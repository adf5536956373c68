"""Activation, preprocessing, augmentation and regularization layers against NumPy, used as
the Keras tutorials use them (in Sequential models, in fit, in tf.data pipelines)."""
import numpy as np
import pytest

import tensorlite as tf

L = tf.keras.layers
RNG = np.random.default_rng(0)


@pytest.mark.parametrize("layer, ref", [
    (L.ReLU(), lambda x: np.maximum(x, 0)),
    (L.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.5),
     lambda x: np.where(x > 0.5, np.minimum(x, 1.0), 0.1 * (x - 0.5))),
    (L.LeakyReLU(), lambda x: np.where(x >= 0, x, 0.3 * x)),
    (L.LeakyReLU(alpha=0.1), lambda x: np.where(x >= 0, x, 0.1 * x)),
    (L.ELU(alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (L.Softmax(), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (L.ThresholdedReLU(theta=0.5), lambda x: np.where(x > 0.5, x, 0)),
    (L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25)),
     lambda x: np.where(x >= 0, x, 0.25 * x)),
    (L.Rescaling(1 / 255.0, offset=-1), lambda x: x / 255.0 - 1),
])
def test_elementwise_layers_match_numpy(layer, ref):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(layer(x).numpy(), ref(x), rtol=1e-5, atol=1e-6)


def test_prelu_learns_its_slope():
    layer = L.PReLU(shared_axes=[1])
    x = tf.constant(-np.ones((2, 3, 4), np.float32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    assert layer.alpha.shape == (1, 4)
    np.testing.assert_allclose(tape.gradient(y, layer.alpha).numpy(), np.full((1, 4), -6.0))


def test_softmax_mask():
    out = L.Softmax()(tf.zeros([1, 3]), mask=tf.constant([[True, True, False]]))
    np.testing.assert_allclose(out.numpy(), [[0.5, 0.5, 0.0]], atol=1e-6)


def test_normalization_adapt_array_and_dataset():
    data = RNG.normal(5.0, 3.0, (200, 3)).astype(np.float32)
    norm = L.Normalization()
    norm.adapt(data)
    np.testing.assert_allclose(norm.adapt_mean.numpy().ravel(), data.mean(0), rtol=1e-5)
    out = norm(data).numpy()
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-4)
    np.testing.assert_allclose(out.std(0), 1, atol=1e-3)
    norm2 = L.Normalization()
    norm2.adapt(tf.data.Dataset.from_tensor_slices(data).batch(32))
    np.testing.assert_allclose(norm2(data).numpy(), out, rtol=1e-4, atol=1e-5)
    fixed = L.Normalization(mean=2.0, variance=4.0)
    np.testing.assert_allclose(fixed(np.array([[4.0]])).numpy(), [[1.0]])
    inv = L.Normalization(mean=2.0, variance=4.0, invert=True)
    np.testing.assert_allclose(inv(np.array([[1.0]])).numpy(), [[4.0]])
    fresh = L.Normalization()  # not adapted: mean 0, variance 1, as Keras
    np.testing.assert_allclose(fresh(data).numpy(), data, rtol=1e-6)
    assert [w.name.split("/")[-1].split(":")[0] for w in fresh.weights] == \
        ["mean", "variance", "count"]
    assert int(norm.count.numpy()) == 200


def test_normalization_in_a_regression_model():
    """The TF regression tutorial's pattern: a normalizer adapted, then a model fit."""
    x = RNG.normal(50.0, 10.0, (64, 2)).astype(np.float32)
    y = x @ np.array([[0.5], [-0.2]], np.float32)
    normalizer = L.Normalization(axis=-1)
    normalizer.adapt(x)
    model = tf.keras.Sequential([normalizer, L.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(x, y, epochs=20, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] / 100
    assert len(model.trainable_variables) == 2  # the statistics are not trained



def test_adapted_normalization_first_in_sequential_builds_it(capsys):
    """The regression tutorial's `dnn_model.summary()`: a Sequential starting with a
    Normalization adapted on 9 features (no input_shape) is built, as in tf.keras 2, whose
    summary lists (None, 9), (None, 64), (None, 1) and 724 parameters."""
    train_features = RNG.normal(size=(40, 9)).astype(np.float32)
    normalizer = tf.keras.layers.Normalization(axis=-1)
    normalizer.adapt(np.array(train_features))
    dnn_model = tf.keras.Sequential([normalizer, L.Dense(64, activation="relu"),
                                     L.Dense(64, activation="relu"), L.Dense(1)])
    dnn_model.compile(loss="mean_absolute_error", optimizer=tf.keras.optimizers.Adam(0.001))
    dnn_model.summary()
    out = capsys.readouterr().out
    assert "(None, 9)" in out and "Total params: 4,884" in out
    assert dnn_model.built and dnn_model.input.shape.as_list() == [None, 9]
    horsepower = tf.keras.layers.Normalization(axis=None)
    horsepower.adapt(train_features[:, 2])
    assert tf.keras.Sequential([horsepower]).input.shape.as_list() == [None]

def test_resizing_center_crop():
    img = RNG.random((2, 6, 8, 3)).astype(np.float32)
    assert L.Resizing(3, 4)(img).shape == (2, 3, 4, 3)
    np.testing.assert_allclose(L.CenterCrop(2, 4)(img).numpy(), img[:, 2:4, 2:6])
    assert L.CenterCrop(8, 8)(img).shape == (2, 8, 8, 3)  # smaller: resized
    assert L.Resizing(4, 4, crop_to_aspect_ratio=True)(img).shape == (2, 4, 4, 3)


def test_random_layers_pass_through_at_inference():
    img = RNG.random((2, 6, 6, 3)).astype(np.float32)
    for layer in (L.RandomFlip(), L.RandomRotation(0.2), L.RandomZoom(0.3),
                  L.RandomContrast(0.5)):
        np.testing.assert_array_equal(layer(img).numpy(), img)
        np.testing.assert_array_equal(layer(img, training=False).numpy(), img)
    np.testing.assert_array_equal(L.RandomCrop(4, 4)(img).numpy(), img[:, 1:5, 1:5])


def test_random_flip_is_a_flip():
    img = RNG.random((8, 5, 5, 1)).astype(np.float32)
    out = L.RandomFlip("horizontal", seed=1)(img, training=True).numpy()
    for o, i in zip(out, img):
        assert np.array_equal(o, i) or np.array_equal(o, i[:, ::-1])
    assert not np.array_equal(out, img) and not np.array_equal(out, img[:, :, ::-1])


def test_random_rotation_quarter_turn_and_fill_modes():
    img = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    quarter = L.RandomRotation((0.25, 0.25), interpolation="nearest")
    out = quarter(img, training=True).numpy()[0, :, :, 0]
    assert any(np.array_equal(out, np.rot90(img[0, :, :, 0], k)) for k in (1, -1))
    zoom_out = L.RandomZoom((1.0, 1.0), fill_mode="constant", fill_value=-1.0,
                            interpolation="nearest")
    out = zoom_out(np.ones((4, 4, 1), np.float32), training=True).numpy()[..., 0]
    assert out[0, 0] == -1.0 and out[1:3, 1:3].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    reflect = L.RandomZoom((1.0, 1.0), fill_mode="reflect", interpolation="nearest")
    assert (reflect(np.ones((4, 4, 1), np.float32), training=True).numpy() == 1).all()


def test_random_crop_and_contrast_in_training():
    img = 64 + RNG.random((3, 6, 6, 3)).astype(np.float32) * 128  # never clipped
    crops = L.RandomCrop(4, 4, seed=0)(img, training=True).numpy()
    assert crops.shape == (3, 4, 4, 3)
    for c, i in zip(crops, img):
        assert any(np.array_equal(c, i[t:t + 4, s:s + 4]) for t in range(3) for s in range(3))
    out = L.RandomContrast((0.5, 0.5), seed=0)(img, training=True).numpy()
    mean = img.mean(axis=(1, 2), keepdims=True)
    factor = (out - mean) / (img - mean)
    assert np.allclose(factor.std(axis=(1, 2, 3)), 0, atol=1e-3)  # one factor per image
    assert ((factor[:, 0, 0, 0] >= 0.5 - 1e-4) & (factor[:, 0, 0, 0] <= 1.5 + 1e-4)).all()


def test_augmentation_inside_fit_draws_each_step():
    """The data augmentation tutorial: augmentation layers at the head of a model in fit
    (traced into fit's graph): each step sees a new draw."""
    seen = []

    class Spy(L.Layer):
        def call(self, x):
            return tf.numpy_function(lambda a: seen.append(a.copy()) or a, [x], tf.float32)

    model = tf.keras.Sequential([L.RandomRotation(0.5, seed=3), Spy(), L.Flatten(),
                                 L.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.repeat(RNG.random((1, 5, 5, 1)).astype(np.float32), 4, axis=0)
    model.fit(x, np.zeros((4, 2), np.float32), batch_size=4, epochs=3, verbose=0,
              shuffle=False)
    assert len(seen) >= 3 and not np.allclose(seen[-1], seen[-2])


def test_noise_and_regularization_layers():
    x = tf.ones([4, 5, 5, 8])
    assert np.array_equal(L.GaussianNoise(1.0)(x).numpy(), x.numpy())
    noisy = L.GaussianNoise(1.0, seed=0)(x, training=True).numpy()
    assert 0.5 < noisy.std() < 1.5
    dropped = L.SpatialDropout2D(0.5, seed=0)(x, training=True).numpy()
    per_map = dropped.reshape(4, 25, 8)
    assert (per_map.std(axis=1) == 0).all()  # whole channels kept or dropped
    assert set(np.unique(per_map)) <= {0.0, 2.0}
    reg = L.ActivityRegularization(l1=0.1, l2=0.01)
    model = tf.keras.Sequential([reg])
    model(tf.constant([[1.0, -2.0]]))
    np.testing.assert_allclose(float(tf.add_n(model.losses)), 0.1 * 3 + 0.01 * 5, rtol=1e-6)


def test_layers_in_a_dataset_map_and_functional_model():
    ds = tf.data.Dataset.from_tensor_slices(RNG.random((4, 8, 8, 3)).astype("float32"))
    ds = ds.map(lambda im: L.Resizing(4, 4)(L.Rescaling(255.0)(im)))
    assert next(iter(ds)).shape == (4, 4, 3)
    inputs = tf.keras.Input((8, 8, 3))
    x = L.RandomFlip()(inputs)
    x = L.ReLU()(L.Rescaling(1 / 255.0)(x))
    model = tf.keras.Model(inputs, L.Softmax()(L.Dense(2)(L.Flatten()(x))))
    assert model(np.zeros((2, 8, 8, 3), np.uint8)).shape == (2, 2)


def test_tf_idf_is_also_taken_in_tf_24s_spelling():
    texts = ["the brain is wider than the sky", "for put them side by side"]
    new, old = (tf.keras.layers.TextVectorization(output_mode=m) for m in ("tf_idf", "tf-idf"))
    new.adapt(texts)
    old.adapt(texts)
    np.testing.assert_allclose(old(texts).numpy(), new(texts).numpy())
    assert old.output_mode == "tf_idf"


def test_normalization_mean_and_variance_attributes_after_adapt():
    data = np.array([[1., 10.], [2., 20.], [3., 30.]], np.float32)
    norm = tf.keras.layers.Normalization()
    norm.adapt(data)
    np.testing.assert_allclose(norm.mean.numpy(), data.mean(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(norm.variance.numpy(), data.var(0, keepdims=True), rtol=1e-5)
    # the TF regression tutorial's single-feature normalizer
    horsepower = np.array([130., 165., 150., 140.])
    single = tf.keras.layers.Normalization(input_shape=[1, ], axis=None)
    single.adapt(horsepower)
    assert single.mean.numpy().tolist() == [horsepower.mean()]
    with pytest.raises(AttributeError, match="before it is built"):
        tf.keras.layers.Normalization().mean  # noqa: B018


def test_discretization_as_hands_on_ml_and_keras_docs_use_it():
    """Hands-On ML ch. 13 buckets ages with given boundaries, then adapts 3 bins; Keras's
    docstring adapts 4 bins with epsilon 0.01. Values and learned boundaries are real TF
    2.21's (Keras 3's quantile summary, ported step for step)."""
    age = tf.constant([[10.], [93.], [57.], [18.], [37.], [5.]])
    discretize_layer = tf.keras.layers.Discretization(bin_boundaries=[18., 50.])
    age_categories = discretize_layer(age)
    assert age_categories.dtype == tf.int32
    assert age_categories.numpy().ravel().tolist() == [0, 2, 2, 1, 1, 0]
    discretize_layer = tf.keras.layers.Discretization(num_bins=3)
    discretize_layer.adapt(age)
    np.testing.assert_allclose(discretize_layer.bin_boundaries, [10.0, 36.999996], rtol=1e-6)
    age_categories = discretize_layer(age)
    assert age_categories.numpy().ravel().tolist() == [1, 2, 2, 1, 2, 0]
    onehot_layer = tf.keras.layers.CategoryEncoding(num_tokens=3)
    assert onehot_layer(age_categories).numpy().tolist() == [
        [0, 1, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0], [0, 0, 1], [1, 0, 0]]
    x = np.array([[-1.5, 1.0, 3.4, .5], [0.0, 3.0, 1.3, 0.0]])
    layer = tf.keras.layers.Discretization(num_bins=4, epsilon=0.01)
    layer.adapt(x)
    np.testing.assert_allclose(layer.bin_boundaries, [0.0, 0.5, 1.3], rtol=1e-6)
    assert layer(x).numpy().tolist() == [[0, 2, 3, 2], [1, 3, 3, 1]]
    r = np.random.default_rng(0).normal(size=(1000, 3)).astype('float32')
    batched = tf.keras.layers.Discretization(num_bins=5)
    batched.adapt(tf.data.Dataset.from_tensor_slices(r).batch(64))
    np.testing.assert_allclose(batched.bin_boundaries,
                               [-0.82022, -0.25487, 0.2721, 0.87072], atol=1e-5)
    count = tf.keras.layers.Discretization(bin_boundaries=[0., 1.], output_mode="count")
    assert count(np.array([[-1., 0.5, 2., 2.]])).numpy().tolist() == [[1, 1, 2]]
    with pytest.raises(ValueError, match="either `num_bins` or `bin_boundaries`"):
        tf.keras.layers.Discretization()
    clone = tf.keras.layers.Discretization.from_config(discretize_layer.get_config())
    assert clone(age).numpy().ravel().tolist() == [1, 2, 2, 1, 2, 0]


def test_segmentation_tutorials_augment_maps_uint8_masks_in_and_out_of_training():
    """The segmentation tutorial's `Augment` layer maps (image, uint8 mask) batches through
    two RandomFlips: the layers give float32 whether or not they are training (as Keras
    casts first), so the Map's element spec holds when fit iterates it."""
    class Augment(tf.keras.layers.Layer):
        def __init__(self, seed=42):
            super().__init__()
            self.augment_inputs = tf.keras.layers.RandomFlip(mode="horizontal", seed=seed)
            self.augment_labels = tf.keras.layers.RandomFlip(mode="horizontal", seed=seed)

        def call(self, inputs, labels):
            inputs = self.augment_inputs(inputs)
            labels = self.augment_labels(labels)
            return inputs, labels

    images = RNG.random((4, 8, 8, 3)).astype(np.float32)
    masks = RNG.integers(0, 3, (4, 8, 8, 1)).astype(np.uint8)
    flip = tf.keras.layers.RandomFlip(mode="horizontal", seed=1)
    assert flip(masks, training=False).dtype == tf.float32
    assert flip(masks, training=True).dtype == tf.float32
    np.testing.assert_array_equal(flip(masks, training=False).numpy(), masks)
    train_batches = tf.data.Dataset.from_tensor_slices((images, masks)).batch(2).map(Augment())
    assert train_batches.element_spec[1].dtype == tf.float32
    model = tf.keras.Sequential([tf.keras.layers.Conv2D(3, 1, input_shape=(8, 8, 3))])
    model.compile(optimizer='adam',
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(train_batches, epochs=1, verbose=0)
