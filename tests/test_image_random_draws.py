"""The eager scalar draws of tf.image's random ops (random_ops.scalar_uniform through
image_args.uniform_draw) give the values of tf.random.uniform's ops, from the same stream,
so that skipping the ops (a tf.data map's augmentation runs several a element, all under
the GIL) changes no seeded result."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import dispatch
from tensorlite.ops import image_args


class _Watcher:
    """An observer (as a tape or trace is): the draws then go through the ops."""

    def __init__(self):
        self.ops = []

    def record(self, op, inputs, attrs, outputs):
        self.ops.append(op.name)


def _draws(lo, hi, seed, observed):
    watcher = _Watcher()
    if observed:
        dispatch.OBSERVERS.append(watcher)
    try:
        out = [image_args.uniform_draw([], lo, hi, seed, False) for _ in range(40)]
    finally:
        if observed:
            dispatch.OBSERVERS.remove(watcher)
    return out, watcher.ops


@pytest.mark.parametrize("seed", [None, 7])
@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (0, 1), (-0.1, 0.1), (0.8, 1.2),
                                    (-0.05, 0.05), (-3, 7)])
def test_eager_scalar_draw_is_the_ops_value(lo, hi, seed):
    tf.random.set_seed(11)
    fast, ops = _draws(lo, hi, seed, observed=False)
    assert not ops
    tf.random.set_seed(11)
    slow, ops = _draws(lo, hi, seed, observed=True)
    assert "RandomUniform" in ops  # the general path ran the ops
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype == tf.float32 and a.shape == b.shape == ()
        assert a.numpy().tobytes() == b.numpy().tobytes()
    values = np.array([a.numpy() for a in fast])
    assert len(set(values.tolist())) > 30 and (values >= lo).all() and (values < hi).all()


def test_seeded_augmentation_map_is_unchanged_by_the_fast_draws():
    # a seeded map's elements, computed with the draws' ops and without them
    images = np.random.default_rng(0).integers(0, 256, (6, 9, 7, 3)).astype(np.uint8)

    def augment(image):
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_brightness(image, max_delta=0.1)
        image = tf.image.random_saturation(image, 0.8, 1.2)
        image = tf.image.random_hue(image, 0.05)
        return tf.image.random_contrast(image, 0.8, 1.2)

    def run(observed):
        tf.random.set_seed(5)
        watcher = _Watcher()
        if observed:
            dispatch.OBSERVERS.append(watcher)
        try:
            return [augment(tf.constant(x)).numpy() for x in images]
        finally:
            if observed:
                dispatch.OBSERVERS.remove(watcher)
    for a, b in zip(run(False), run(True)):
        np.testing.assert_array_equal(a, b)
