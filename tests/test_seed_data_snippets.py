"""The tf.data snippets of seeds 000, 002 and 003, run as written on small data the tests
write (the tfds-loaded ones on an in-memory stand-in for `tfds.load`)."""
import multiprocessing
import time

import numpy as np
import pytest

import tensorlite as tf
from tests.test_image_ops import augment  # seed 003's augmentation, as written


@pytest.fixture()
def tfrecords(tmp_path):
    files = []
    for k in range(3):
        path = str(tmp_path / f"part-{k}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for i in range(20):
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[k * 100.0 + i])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}))
                w.write(ex.SerializeToString())
        files.append(path)
    return files


def expensive_preprocess(record):
    parsed = tf.io.parse_single_example(record, {
        "x": tf.io.FixedLenFeature([1], tf.float32),
        "label": tf.io.FixedLenFeature([], tf.int64)})
    return parsed["x"] * 2.0, parsed["label"]


def test_seed000_normal_pipeline(tfrecords):
    dataset = tf.data.TFRecordDataset(tfrecords)
    dataset = dataset.map(expensive_preprocess)
    dataset = dataset.shuffle(buffer_size=1024)
    dataset = dataset.batch(batch_size=32)
    dataset = dataset.prefetch(tf.data.AUTOTUNE)

    inputs = tf.keras.Input(shape=(1,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    model.compile(optimizer="sgd",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(dataset, verbose=0)
    batches = list(dataset)
    assert [b[0].shape[0] for b in batches] == [32, 28]
    xs = sorted(np.concatenate([b[0].numpy().ravel() for b in batches]).tolist())
    assert xs == sorted(2.0 * (k * 100 + i) for k in range(3) for i in range(20))


def test_seed000_snapshot_pipeline(tfrecords, tmp_path):
    def run():
        dataset = tf.data.TFRecordDataset(tfrecords)
        dataset = dataset.map(expensive_preprocess)
        # snapshot all above
        dataset = dataset.snapshot(str(tmp_path / "snapshot_dir"))
        dataset = dataset.shuffle(buffer_size=1024)
        dataset = dataset.batch(batch_size=32)
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
        return sorted(np.concatenate([b[0].numpy().ravel() for b in dataset]).tolist())
    first, second = run(), run()
    assert first == second and len(first) == 60


def test_seed000_distribute_placeholder_address_is_a_clear_error(tfrecords):
    # the service itself runs in tests/test_data_service.py; the seed's literal placeholder
    # is not an address
    dataset = tf.data.TFRecordDataset(tfrecords).map(expensive_preprocess)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a dispatcher's address"):
        dataset.distribute("<master_address>")


def test_seed002_artificial_dataset_variants_shortened():
    class ArtificialDataset(tf.data.Dataset):
        def _generator(num_samples):
            time.sleep(0.003)
            for sample_idx in range(num_samples):
                time.sleep(0.0015)
                yield (sample_idx,)

        def __new__(cls, num_samples=3):
            return tf.data.Dataset.from_generator(
                cls._generator, output_types=tf.dtypes.int64, output_shapes=(1,),
                args=(num_samples,))

    def benchmark(dataset, num_epochs=2):
        start_time = time.perf_counter()
        seen = []
        for epoch_num in range(num_epochs):
            for sample in dataset:
                seen.append(int(sample[0]))
                time.sleep(0.001)
        tf.print("Execution time:", time.perf_counter() - start_time)
        return seen
    assert benchmark(ArtificialDataset()) == [0, 1, 2] * 2
    assert benchmark(ArtificialDataset().prefetch(tf.data.experimental.AUTOTUNE)) == [0, 1, 2] * 2
    seq = benchmark(tf.data.Dataset.range(5).interleave(ArtificialDataset))
    par = benchmark(tf.data.Dataset.range(5).interleave(
        ArtificialDataset, num_parallel_calls=tf.data.experimental.AUTOTUNE))
    assert seq == par and sorted(seq) == sorted([i for n in range(5) for i in range(n)] * 2)


def _tfds_load_stand_in(n=16):
    """What tfds.load('cats_vs_dogs') yields: dicts of an image and a label."""
    rng = np.random.default_rng(0)
    return tf.data.Dataset.from_tensor_slices({
        "image": rng.uniform(0, 255, (n, 40, 30, 3)).astype(np.float32),
        "label": rng.integers(0, 2, n)})


def test_seed003_caching_and_parallel_augmentation(tmp_path):
    dataset = _tfds_load_stand_in()
    # In-memory caching
    train_dataset = dataset.cache()
    assert len(list(train_dataset)) == len(list(train_dataset)) == 16
    # Disk caching
    train_dataset = dataset.cache(filename=str(tmp_path / "cache"))
    assert len(list(train_dataset)) == 16 and len(list(train_dataset)) == 16

    augmented_dataset = dataset.map(augment, num_parallel_calls=1)
    num_cores = multiprocessing.cpu_count()
    augmented_dataset = dataset.map(augment, num_parallel_calls=num_cores)
    image, label = next(iter(augmented_dataset))
    assert image.shape == (224, 224, 3) and image.dtype == tf.float32
    augmented_dataset = dataset.map(augment, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    assert len(list(augmented_dataset)) == 16


def test_seed003_prefetch_batch_map_vectorization_and_ordering():
    dataset = _tfds_load_stand_in()

    def format_image(features):
        return tf.image.resize(features["image"], (8, 8)) / 255.0, features["label"]
    train_dataset = dataset.map(format_image).prefetch(tf.data.experimental.AUTOTUNE)
    assert next(iter(train_dataset))[0].shape == (8, 8, 3)

    BATCH_SIZE = 4

    def func(images, labels):
        return images * 2.0, labels
    dataset2 = train_dataset.batch(BATCH_SIZE).map(func)
    assert next(iter(dataset2))[0].shape == (4, 8, 8, 3)
    options = tf.data.Options()
    options.experimental_optimization.map_vectorization.enabled = True
    dataset2 = dataset2.with_options(options)
    assert len(list(dataset2)) == 4

    def transforms(image, label):
        return image + 1.0, label
    transformed_dataset = train_dataset.map(transforms).cache()
    assert len(list(transformed_dataset)) == 16
    assert len(list(train_dataset.shuffle(16).repeat(2))) == 32
    assert len(list(train_dataset.repeat(2).shuffle(16))) == 32
